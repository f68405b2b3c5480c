// Lane-redundant stores: after a warp all-reduce every lane knows the warp's
// sum and stores it to the warp's shared slot (no lane-0 guard); every thread
// of a block stores the block's total to out[blockIdx.x]. Several threads
// store one value to one element: the element's adjoint must reach exactly
// one of them (issue "Real CUDA code in", silent wrong gradient 1).
#include "enzyme.h"

__device__ float warp_allsum(float v) {
  for (int offset = 16; offset > 0; offset /= 2)
    v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

// y[i] = x[i] * sum(x) over one block of up to 1024 threads.
__device__ void scale_by_sum(const float *x, float *y) {
  __shared__ float partial[32];
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  float w = warp_allsum(x[threadIdx.x]);
  partial[warp] = w; // all 32 lanes store the same value
  __syncthreads();
  float total = warp_allsum(lane < blockDim.x / 32 ? partial[lane] : 0.0f);
  y[threadIdx.x] = x[threadIdx.x] * total;
}

__global__ void scale_by_sum_kernel(const float *x, float *y) {
  scale_by_sum(x, y);
}

__global__ void grad_scale_by_sum(const float *x, float *dx, float *y,
                                  float *dy) {
  __enzyme_autodiff<void>((void *)scale_by_sum, enzyme_dup, x, dx, enzyme_dup,
                          y, dy);
}

// out[b] = (sum of block b's x)^2, stored by every thread of the block.
__device__ void block_square(const float *x, float *out, int n) {
  __shared__ float partial[32];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  float w = warp_allsum(i < n ? x[i] : 0.0f);
  if (lane == 0)
    partial[warp] = w;
  __syncthreads();
  float total = warp_allsum(lane < blockDim.x / 32 ? partial[lane] : 0.0f);
  out[blockIdx.x] = total * total;
}

__global__ void block_square_kernel(const float *x, float *out, int n) {
  block_square(x, out, n);
}

__global__ void grad_block_square(const float *x, float *dx, float *out,
                                  float *dout, int n) {
  __enzyme_autodiff<void>((void *)block_square, enzyme_dup, x, dx, enzyme_dup,
                          out, dout, enzyme_const, n);
}
