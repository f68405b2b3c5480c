// Loops with run-time trip counts that overwrite buffers they read, the
// AD checkpointing them with the buffers in the snapshots:
//  - the classic __syncthreads tree reduction over blockDim.x, in place in
//    a __shared__ array;
//  - a thread's local row scaled in place, entry by entry, by a loop of
//    run-time length that also reads it.
#include "enzyme.h"

__device__ void block_sum_of_squares(const float *x, float *totals, int n) {
  __shared__ float partial[256];
  unsigned t = threadIdx.x;
  unsigned i = blockIdx.x * blockDim.x + t;
  partial[t] = i < n ? x[i] * x[i] : 0.0f;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (t < s)
      partial[t] += partial[t + s];
    __syncthreads();
  }
  if (t == 0)
    totals[blockIdx.x] = partial[0];
}

__global__ void grad_block_sum_of_squares(const float *x, float *dx,
                                          float *totals, float *dtotals,
                                          int n) {
  __enzyme_autodiff<void>((void *)block_sum_of_squares, enzyme_dup, x, dx,
                          enzyme_dup, totals, dtotals, enzyme_const, n);
}

// y[i, :] = row * sum, where m steps each add row[j % 8]^2 to sum and halve
// row[j % 8].
__device__ void halving_row(const float *x, float *y, int m, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  float row[8];
  for (int j = 0; j < 8; ++j)
    row[j] = x[i * 8 + j];
  float sum = 0;
  for (int j = 0; j < m; ++j) {
    sum += row[j % 8] * row[j % 8];
    row[j % 8] *= 0.5f;
  }
  for (int j = 0; j < 8; ++j)
    y[i * 8 + j] = row[j] * sum;
}

__global__ void grad_halving_row(const float *x, float *dx, float *y,
                                 float *dy, int m, int n) {
  __enzyme_autodiff<void>((void *)halving_row, enzyme_dup, x, dx, enzyme_dup,
                          y, dy, enzyme_const, m, enzyme_const, n);
}
