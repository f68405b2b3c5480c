// A gradient request through dynamic shared memory: refused with a located
// error (its shadow would need a second launch-sized region), never a wrong
// gradient.
#include "enzyme.h"

__device__ void scaled_copy(const float *x, float *y) {
  extern __shared__ float staged[];
  staged[threadIdx.x] = 2.0f * x[threadIdx.x];
  __syncthreads();
  y[threadIdx.x] = staged[blockDim.x - 1 - threadIdx.x];
}

__global__ void grad_scaled_copy(const float *x, float *dx, float *y,
                                 float *dy) {
  __enzyme_autodiff<void>((void *)scaled_copy, enzyme_dup, x, dx, enzyme_dup,
                          y, dy);
}
