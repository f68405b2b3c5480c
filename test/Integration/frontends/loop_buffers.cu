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

// Max and min trees of the same shape (reversed by each position's winner:
// AD.md, Reduction tree), their results read at the root and at position 1
// (a partial result), and the min tree with the partner as fmaxf's first
// operand; then the tile reused by a sum tree (the softmax pattern: the
// max's positions are overwritten before anything reads them again).
__device__ void block_extrema(const float *x, float *out, int n) {
  __shared__ float tile[256];
  unsigned t = threadIdx.x;
  unsigned i = blockIdx.x * blockDim.x + t;
  float v = i < n ? x[i] : 0.0f;
  tile[t] = v;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (t < s)
      tile[t] = fmaxf(tile[t], tile[t + s]);
    __syncthreads();
  }
  float hi = tile[0];
  float second = blockDim.x > 1 ? tile[1] : 0.0f;
  __syncthreads();
  tile[t] = v * v;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (t < s)
      tile[t] = fminf(tile[t + s], tile[t]);
    __syncthreads();
  }
  float lo = tile[0];
  __syncthreads();
  tile[t] = v * hi;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (t < s)
      tile[t] += tile[t + s];
    __syncthreads();
  }
  if (t == 0) {
    out[3 * blockIdx.x] = hi * lo;
    out[3 * blockIdx.x + 1] = second;
    out[3 * blockIdx.x + 2] = tile[0];
  }
}

__global__ void grad_block_extrema(const float *x, float *dx, float *out,
                                   float *dout, int n) {
  __enzyme_autodiff<void>((void *)block_extrema, enzyme_dup, x, dx,
                          enzyme_dupnoneed, out, dout, enzyme_const, n);
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
