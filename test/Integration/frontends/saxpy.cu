// saxpy with the scalar a active (enzyme_out): its gradient is returned by
// __enzyme_autodiff and stored per thread, so the host sums da.
#include "enzyme.h"

__device__ void saxpy(float a, const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = a * x[i] + y[i];
}

__global__ void saxpy_kernel(float a, const float *x, float *y, int n) {
  saxpy(a, x, y, n);
}

__global__ void grad_saxpy(float a, const float *x, float *dx, float *y,
                           float *dy, float *da, int n) {
  float g = __enzyme_autodiff<float>((void *)saxpy, enzyme_out, a, enzyme_dup,
                                     x, dx, enzyme_dup, y, dy, enzyme_const, n);
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    da[i] = g;
}
