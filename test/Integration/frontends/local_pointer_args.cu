// Workgroup and thread-local memory passed to device functions as pointers:
// a __shared__ tile handed to a block-sum helper, and a thread's local
// array handed to an accumulating helper. Both helpers are noinline.
#include "enzyme.h"

__device__ __noinline__ float tile_sum(const float *tile, int count) {
  float s = 0;
  for (int j = 0; j < count; ++j)
    s += tile[j];
  return s;
}

__device__ __noinline__ void accumulate(float *acc, float v) {
  for (int j = 0; j < 4; ++j)
    acc[j] += v * (j + 1);
}

// y[i] = x[i] * (sum of the block's x^2) + sum_j acc[j] * x[i]^j terms.
__device__ void block_weighted(const float *x, float *y, int n) {
  __shared__ float tile[64];
  int t = threadIdx.x;
  int i = blockIdx.x * blockDim.x + t;
  float v = i < n ? x[i] : 0.0f;
  tile[t] = v * v;
  __syncthreads();
  float total = tile_sum(tile, blockDim.x);
  float acc[4] = {0, 0, 0, 0};
  accumulate(acc, v);
  accumulate(acc, v * v);
  if (i < n)
    y[i] = v * total + acc[0] * acc[3] - acc[1] * acc[2];
}

__global__ void block_weighted_kernel(const float *x, float *y, int n) {
  block_weighted(x, y, n);
}

__global__ void grad_block_weighted(const float *x, float *dx, float *y,
                                    float *dy, int n) {
  __enzyme_autodiff<void>((void *)block_weighted, enzyme_dup, x, dx,
                          enzyme_dup, y, dy, enzyme_const, n);
}
