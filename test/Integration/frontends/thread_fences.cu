// Memory fences: the last-block reduction (each block publishes its partial
// sum, __threadfence() makes it visible before the block takes a ticket from
// an atomicInc counter, the block drawing the last ticket adds the partials
// and resets the counter), and __threadfence_block() inside a differentiated
// function (replayed at the mirrored point). thread_fence_refused.cu: the
// gradient through a device-scope fence, refused.
#include "enzyme.h"

__global__ void sum_all(const float *x, float *partial, float *total,
                        unsigned int *retirement_count, int n) {
  __shared__ float tile[64];
  __shared__ bool last;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x] = i < n ? x[i] : 0.0f;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s)
      tile[threadIdx.x] += tile[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    partial[blockIdx.x] = tile[0];
    __threadfence();
    unsigned int ticket = atomicInc(retirement_count, gridDim.x);
    last = ticket == gridDim.x - 1;
  }
  __syncthreads();
  if (last && threadIdx.x == 0) {
    float sum = 0.0f;
    for (int b = 0; b < gridDim.x; ++b)
      sum += partial[b];
    *total = sum;
    *retirement_count = 0;
  }
}

__device__ void fenced_square(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i] * x[i];
    __threadfence_block();
    y[i] = 3.0f * v + x[i];
  }
}

__global__ void fenced_square_kernel(const float *x, float *y, int n) {
  fenced_square(x, y, n);
}

__global__ void grad_fenced_square(const float *x, float *dx, float *y,
                                   float *dy, int n) {
  __enzyme_autodiff<void>((void *)fenced_square, enzyme_dup, x, dx,
                          enzyme_dupnoneed, y, dy, enzyme_const, n);
}
