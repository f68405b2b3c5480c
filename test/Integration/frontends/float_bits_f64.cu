// A double shuffled the way CUDA's headers do it: __shfl_down_sync on a double
// is two 32-bit shuffles of its halves, joined again; lanes whose source is
// out of range keep their own value.
#include "enzyme.h"

// y[i] = x[i]^2 + x[i + 1]^2 within a warp (lane 31 adds its own).
__device__ void shuffle_double(const double *x, double *y) {
  int i = threadIdx.x;
  double v = x[i] * x[i];
  v += __shfl_down_sync(0xffffffffu, v, 1);
  y[i] = v;
}

__global__ void shuffle_double_kernel(const double *x, double *y) {
  shuffle_double(x, y);
}

__global__ void grad_shuffle_double(const double *x, double *dx, double *y,
                                    double *dy) {
  __enzyme_autodiff<void>((void *)shuffle_double, enzyme_dup, x, dx,
                          enzyme_dup, y, dy);
}
