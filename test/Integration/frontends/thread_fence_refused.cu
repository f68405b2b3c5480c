// Differentiating through a device-scope fence (__threadfence) is refused
// with a located error: blocks of one launch pass data through it, and the
// reverse sweep cannot order their adjoints (thread_fences.cu runs the
// fences that work).
#include "enzyme.h"

__device__ void published_square(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    y[i] = x[i] * x[i];
    __threadfence();
  }
}

__global__ void grad_published_square(const float *x, float *dx, float *y,
                                      float *dy, int n) {
  __enzyme_autodiff<void>((void *)published_square, enzyme_dup, x, dx,
                          enzyme_dup, y, dy, enzyme_const, n);
}
