// Loops with run-time trip counts that read memory which they, later code or
// an enclosing loop overwrite, in the idioms of production kernels: no static
// bound, no checkpointing (the reads are not repeatable), so reverse mode
// keeps their values in a global-memory tape that the launch allocates.
//  - softmax of a row in place: a max pass, an exp-and-sum pass that
//    overwrites the row, a normalising pass `row[j] /= sum`;
//  - attention's `att[t2] *= inv` after the loop that filled att;
//  - a read-modify-write through an index array (not provably disjoint);
//  - a tiled matmul whose __shared__ tiles every iteration of a run-time K
//    loop overwrites.
#include "enzyme.h"

__device__ void softmax_rows(float *x, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows)
    return;
  float *row = x + r * cols;
  float m = -1e30f;
  for (int j = 0; j < cols; ++j)
    m = fmaxf(m, row[j]);
  float sum = 0.0f;
  for (int j = 0; j < cols; ++j) {
    row[j] = expf(row[j] - m);
    sum += row[j];
  }
  for (int j = 0; j < cols; ++j)
    row[j] /= sum;
}

__global__ void grad_softmax_rows(float *x, float *dx, int rows, int cols) {
  __enzyme_autodiff<void>((void *)softmax_rows, enzyme_dup, x, dx,
                          enzyme_const, rows, enzyme_const, cols);
}

// att[t2] = q . k[t2] for t2 <= t, softmax-like scaling in place.
__device__ void causal_scores(const float *q, const float *k, float *att,
                              int T, int C) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= T)
    return;
  float *a = att + t * T;
  float total = 0.0f;
  for (int t2 = 0; t2 <= t; ++t2) {
    float s = 0.0f;
    for (int c = 0; c < C; ++c)
      s += q[t * C + c] * k[t2 * C + c];
    a[t2] = s * s;
    total += a[t2];
  }
  float inv = 1.0f / (1.0f + total);
  for (int t2 = 0; t2 <= t; ++t2)
    a[t2] *= inv;
}

__global__ void grad_causal_scores(const float *q, float *dq, const float *k,
                                   float *dk, float *att, float *datt, int T,
                                   int C) {
  __enzyme_autodiff<void>((void *)causal_scores, enzyme_dup, q, dq,
                          enzyme_dup, k, dk, enzyme_dup, att, datt,
                          enzyme_const, T, enzyme_const, C);
}

// Each thread applies m updates to its own state row through an index
// array: state[idx[k]] = state[idx[k]] * w[k] + sin(state[idx[k]]).
__device__ void indexed_updates(float *state, const float *w, const int *idx,
                                int m, int width, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  float *s = state + i * width;
  for (int k = 0; k < m; ++k) {
    int j = idx[k];
    s[j] = s[j] * w[k] + sinf(s[j]);
  }
}

__global__ void grad_indexed_updates(float *state, float *dstate,
                                     const float *w, float *dw,
                                     const int *idx, int m, int width, int n) {
  __enzyme_autodiff<void>((void *)indexed_updates, enzyme_dup, state, dstate,
                          enzyme_dup, w, dw, enzyme_const, idx, enzyme_const,
                          m, enzyme_const, width, enzyme_const, n);
}

// C = A (n x K) B (K x n), 8 x 8 tiles in shared memory, run-time K.
#define TILE 8
__device__ void tiled_matmul(const float *A, const float *B, float *C, int n,
                             int K) {
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE];
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += TILE) {
    As[ty][tx] = row < n && k0 + tx < K ? A[row * K + k0 + tx] : 0.0f;
    Bs[ty][tx] = k0 + ty < K && col < n ? B[(k0 + ty) * n + col] : 0.0f;
    __syncthreads();
    for (int k = 0; k < TILE; ++k)
      acc += As[ty][k] * Bs[k][tx];
    __syncthreads();
  }
  if (row < n && col < n)
    C[row * n + col] = acc;
}

__global__ void grad_tiled_matmul(const float *A, float *dA, const float *B,
                                  float *dB, float *C, float *dC, int n,
                                  int K) {
  __enzyme_autodiff<void>((void *)tiled_matmul, enzyme_dup, A, dA, enzyme_dup,
                          B, dB, enzyme_dup, C, dC, enzyme_const, n,
                          enzyme_const, K);
}
