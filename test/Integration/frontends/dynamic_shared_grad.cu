// Gradient requests through dynamic shared memory (`extern __shared__`,
// sized by the launch): a staged reversal and the classic tree reduction of
// a 64-thread block (a compile-time block size, as templated kernels have:
// a tree over blockDim.x rewrites shared memory in a loop of runtime trip
// count, which the AD refuses until tapes live in global memory).
// The gradient kernels keep the shadow in a second region after the
// primal's, so their launch reserves twice the bytes (the runtimes do it).
#include "enzyme.h"

__device__ void scaled_copy(const float *x, float *y) {
  extern __shared__ float staged[];
  staged[threadIdx.x] = 2.0f * x[threadIdx.x] * x[threadIdx.x];
  __syncthreads();
  y[threadIdx.x] = staged[blockDim.x - 1 - threadIdx.x];
}

__global__ void scaled_copy_kernel(const float *x, float *y) {
  scaled_copy(x, y);
}

__global__ void grad_scaled_copy(const float *x, float *dx, float *y,
                                 float *dy) {
  __enzyme_autodiff<void>((void *)scaled_copy, enzyme_dup, x, dx, enzyme_dup,
                          y, dy);
}

__device__ void block_totals(const float *x, float *totals, int n) {
  extern __shared__ float partial[];
  unsigned t = threadIdx.x;
  unsigned i = blockIdx.x * blockDim.x + t;
  partial[t] = i < n ? x[i] * x[i] : 0.0f;
  __syncthreads();
  for (unsigned s = 32; s > 0; s >>= 1) {
    if (t < s)
      partial[t] += partial[t + s];
    __syncthreads();
  }
  if (t == 0)
    totals[blockIdx.x] = partial[0];
}

__global__ void grad_block_totals(const float *x, float *dx, float *totals,
                                  float *dtotals, int n) {
  __enzyme_autodiff<void>((void *)block_totals, enzyme_dup, x, dx, enzyme_dup,
                          totals, dtotals, enzyme_const, n);
}
