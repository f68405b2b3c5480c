// A runtime-bounded loop inside the bounds check: y[i] = sum_k x[i]^k * c[k].
#include "enzyme.h"

__device__ void poly(const float *x, const float *c, float *y, int m, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float acc = 0.0f, p = 1.0f;
    float v = x[i];
    for (int k = 0; k < m; ++k) {
      acc += c[k] * p;
      p *= v;
    }
    y[i] = acc;
  }
}

__global__ void poly_kernel(const float *x, const float *c, float *y, int m,
                            int n) {
  poly(x, c, y, m, n);
}

__global__ void grad_poly(const float *x, float *dx, const float *c, float *dc,
                          float *y, float *dy, int m, int n) {
  __enzyme_autodiff<void>((void *)poly, enzyme_dup, x, dx, enzyme_dup, c, dc,
                          enzyme_dup, y, dy, enzyme_const, m, enzyme_const, n);
}
