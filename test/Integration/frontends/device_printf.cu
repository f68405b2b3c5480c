// printf in device code, as production kernels use it to report what they
// see (test_device_printf.py): numbers of every promoted type, inside a
// branch, in a kernel and in its gradient.
#include <cstdio>

#include "enzyme.h"

__global__ void report(const float *x, int n, long long tag) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && x[i] > 100.0f)
    printf("big x[%d] = %.1f (n=%d, tag=%lld)\n", i, x[i], n, tag);
}

__device__ void square_noisy(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i] * x[i];
    if (i == 0)
      printf("y[0] = %f\n", v);
    y[i] = v;
  }
}

__global__ void grad_square_noisy(const float *x, float *dx, float *y,
                                  float *dy, int n) {
  __enzyme_autodiff<void>((void *)square_noisy, enzyme_dup, x, dx, enzyme_dup,
                          y, dy, enzyme_const, n);
}
