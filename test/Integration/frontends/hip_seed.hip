// HIP: A[i] = A[i] * sin(A[i]) (OCML's sin) and its gradient.
#include "hip_min.h"
#include "enzyme.h"

__device__ void mulsin(float *A, int n) {
  int i = hipBlockIdx_x * hipBlockDim_x + hipThreadIdx_x;
  if (i < n)
    A[i] = A[i] * sinf(A[i]);
}

__global__ void mulsin_kernel(float *A, int n) { mulsin(A, n); }

__global__ void grad_mulsin(float *A, float *dA, int n) {
  __enzyme_autodiff<void>((void *)mulsin, enzyme_dup, A, dA, enzyme_const, n);
}
