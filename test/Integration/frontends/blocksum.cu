// A __shared__ block reduction with __syncthreads (blocks of 64 threads):
// out[block] = sum of x[i]^2 over the block's elements.
#include "enzyme.h"

__device__ void blocksum(const float *x, float *out, int n) {
  __shared__ float tile[64];
  int t = threadIdx.x;
  int i = blockIdx.x * 64 + t;
  float v = i < n ? x[i] : 0.0f;
  tile[t] = v * v;
  __syncthreads();
  for (int s = 32; s > 0; s >>= 1) {
    if (t < s)
      tile[t] += tile[t + s];
    __syncthreads();
  }
  if (t == 0)
    out[blockIdx.x] = tile[0];
}

__global__ void blocksum_kernel(const float *x, float *out, int n) {
  blocksum(x, out, n);
}

__global__ void grad_blocksum(const float *x, float *dx, float *out,
                              float *dout, int n) {
  __enzyme_autodiff<void>((void *)blocksum, enzyme_dup, x, dx, enzyme_dup, out,
                          dout, enzyme_const, n);
}
