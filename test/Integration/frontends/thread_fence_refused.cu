// Differentiating through a device-scope fence (__threadfence) is refused
// with a located error: blocks of one launch pass data through it, and the
// reverse sweep cannot order their adjoints (thread_fences.cu runs the
// fences that work).
#include "enzyme.h"

__device__ void published_square(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    y[i] = x[i] * x[i];
    __threadfence();
  }
}

__global__ void grad_published_square(const float *x, float *dx, float *y,
                                      float *dy, int n) {
  __enzyme_autodiff<void>((void *)published_square, enzyme_dup, x, dx,
                          enzyme_dup, y, dy, enzyme_const, n);
}

// The single-pass reduction whose last block to arrive sums every block's
// partial (the threadFenceReduction idiom): refused with the reason, at the
// atomic taking the ticket.
__device__ void last_block_sum(const float *x, float *partials,
                               unsigned int *counter, float *total, int n) {
  __shared__ unsigned int ticket;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (threadIdx.x == 0) {
    float s = 0.0f;
    for (int k = 0; k < blockDim.x && blockIdx.x * blockDim.x + k < n; ++k)
      s += x[blockIdx.x * blockDim.x + k] * x[blockIdx.x * blockDim.x + k];
    partials[blockIdx.x] = s;
    __threadfence();
    ticket = atomicAdd(counter, 1);
  }
  __syncthreads();
  if (ticket == gridDim.x - 1 && threadIdx.x == 0) {
    float s = 0.0f;
    for (int b = 0; b < gridDim.x; ++b)
      s += partials[b];
    *total = s;
  }
  (void)i;
}

__global__ void grad_last_block_sum(const float *x, float *dx,
                                    float *partials, float *dpartials,
                                    unsigned int *counter, float *total,
                                    float *dtotal, int n) {
  __enzyme_autodiff<void>((void *)last_block_sum, enzyme_dup, x, dx,
                          enzyme_dup, partials, dpartials, enzyme_const,
                          counter, enzyme_dup, total, dtotal, enzyme_const, n);
}
