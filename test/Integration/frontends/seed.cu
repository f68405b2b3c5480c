// The seed kernel: A[i] = A[i] * A[i]; its gradient through Enzyme's markers.
#include "enzyme.h"

__device__ void mul(float *A, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    A[i] = A[i] * A[i];
}

__global__ void mul_kernel(float *A, int n) { mul(A, n); }

__global__ void grad_mul_kernel(float *A, float *dA, int n) {
  __enzyme_autodiff<void>((void *)mul, enzyme_dup, A, dA, enzyme_const, n);
}
