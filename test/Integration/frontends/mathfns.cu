// Math library calls (libdevice names with -nocudalib) and branches.
#include "enzyme.h"

__device__ void mathfns(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  float v = x[i];
  float r;
  if (v > 0.5f)
    r = sinf(v) * expf(v) + sqrtf(v);
  else if (v > -0.5f)
    r = logf(v + 2.0f) * cosf(v) - tanhf(v);
  else
    r = powf(-v, 1.5f) + fabsf(v) * v;
  y[i] = r;
}

__global__ void mathfns_kernel(const float *x, float *y, int n) {
  mathfns(x, y, n);
}

__global__ void grad_mathfns(const float *x, float *dx, float *y, float *dy,
                             int n) {
  __enzyme_autodiff<void>((void *)mathfns, enzyme_dup, x, dx, enzyme_dup, y, dy,
                          enzyme_const, n);
}

// Forward mode: dy = J dx (the tangent of y for the tangent dx of x).
__global__ void fwd_mathfns(const float *x, float *dx, float *y, float *dy,
                            int n) {
  __enzyme_fwddiff<void>((void *)mathfns, enzyme_dup, x, dx, enzyme_dup, y, dy,
                         enzyme_const, n);
}
