// Loops with run-time trip counts that read memory which they, later code or
// an enclosing loop overwrite, in the idioms of production kernels: no static
// bound, no checkpointing (the reads are not repeatable), so reverse mode
// keeps their values in a global-memory tape that the launch allocates.
//  - softmax of a row in place: a max pass, an exp-and-sum pass that
//    overwrites the row, a normalising pass `row[j] /= sum`;
//  - attention's `att[t2] *= inv` after the loop that filled att;
//  - a read-modify-write through an index array (not provably disjoint);
//  - a tiled matmul whose __shared__ tiles every iteration of a run-time K
//    loop overwrites, and a tile a block of any size reloads.
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

// A tile of 48 floats that the whole block reloads (block-stride, any block
// size) every step of a run-time loop, each thread then reading two of its
// elements into a carried value: every step's snapshot keeps each thread's
// share of the tile, 48 over the block's threads rounded up (the last share
// partly past the tile at 5 or 7 threads).
#define RTILE 48
__device__ void reloaded_tile(const float *X, float *Y, int steps) {
  __shared__ float tile[RTILE];
  int t = threadIdx.x;
  float acc = 0.0f;
  for (int k = 0; k < steps; ++k) {
    for (int e = t; e < RTILE; e += blockDim.x)
      tile[e] = X[k * RTILE + e];
    __syncthreads();
    int j = (t * 7 + k) % RTILE;
    acc = 0.5f * acc + tile[j] * tile[(j + 1) % RTILE];
    __syncthreads();
  }
  Y[blockIdx.x * blockDim.x + t] = acc;
}

__global__ void grad_reloaded_tile(const float *X, float *dX, float *Y,
                                   float *dY, int steps) {
  __enzyme_autodiff<void>((void *)reloaded_tile, enzyme_dup, X, dX,
                          enzyme_dupnoneed, Y, dY, enzyme_const, steps);
}

// Attention-style tiles that loops leave early: one block per head, thread tx
// owns query rows tx, tx + TILE, ...; each outer step reloads a K/V tile of
// TILE rows into shared memory and every row walks it with `break` at the
// sequence end (clang's while loops with two exits). Unnormalised:
// O += exp(q.k) v, l += exp(q.k), so the model is smooth.
#define MAXD 8
__device__ void tiled_exp_attention(const float *Q, const float *K,
                                    const float *V, float *O, float *l, int N,
                                    int d, int Tc, int Tr) {
  __shared__ float Kj[TILE * MAXD], Vj[TILE * MAXD], S[TILE * TILE];
  int tx = threadIdx.x;
  int head = blockIdx.x;
  Q += head * N * d;
  K += head * N * d;
  V += head * N * d;
  O += head * N * d;
  l += head * N;
  for (int j = 0; j < Tc; j++) {
    int kv = j * TILE + tx;
    for (int x = 0; x < d; x++) {
      Kj[tx * d + x] = kv < N ? K[kv * d + x] : 0.0f;
      Vj[tx * d + x] = kv < N ? V[kv * d + x] : 0.0f;
    }
    __syncthreads();
    for (int i = 0; i < Tr; i++) {
      int row = i * TILE + tx;
      if (row >= N)
        break;
      float rowsum = l[row];
      for (int y = 0; y < TILE; y++) {
        if (j * TILE + y >= N)
          break;
        float s = 0.0f;
        for (int x = 0; x < d; x++)
          s += Q[row * d + x] * Kj[y * d + x];
        S[tx * TILE + y] = expf(s);
        rowsum += S[tx * TILE + y];
      }
      l[row] = rowsum;
      for (int x = 0; x < d; x++) {
        float pv = 0.0f;
        for (int y = 0; y < TILE; y++) {
          if (j * TILE + y >= N)
            break;
          pv += S[tx * TILE + y] * Vj[y * d + x];
        }
        O[row * d + x] += pv;
      }
    }
    __syncthreads();
  }
}

__global__ void grad_tiled_exp_attention(const float *Q, float *dQ,
                                         const float *K, float *dK,
                                         const float *V, float *dV, float *O,
                                         float *dO, float *l, float *dl, int N,
                                         int d, int Tc, int Tr) {
  __enzyme_autodiff<void>((void *)tiled_exp_attention, enzyme_dup, Q, dQ,
                          enzyme_dup, K, dK, enzyme_dup, V, dV, enzyme_dup, O,
                          dO, enzyme_dup, l, dl, enzyme_const, N, enzyme_const,
                          d, enzyme_const, Tc, enzyme_const, Tr);
}

// A causal softmax's backward in blocks of 32 (one block per row t): the
// products p * dp of the row go through a shared tile reloaded every
// `t2b <= t` step (a `<=` counter, stepped by the block size), and the inner
// loop runs min(t + 1 - t2b, 32) times: a bound the tape takes from that
// range. dx[t3] = sum_{t2 <= t} p[t2] dp[t2] ([t2 == t3] - p[t3]).
#define ROWBLOCK 32
__device__ void causal_softmax_bwd_tiles(float *dx, const float *dp,
                                         const float *p, int T) {
  __shared__ float tile[ROWBLOCK];
  int t = blockIdx.x;
  p += t * T;
  dp += t * T;
  dx += t * T;
  int steps = (t + ROWBLOCK) / ROWBLOCK;
  for (int t3f = 0; t3f < steps; ++t3f) {
    int t3 = t3f * ROWBLOCK + threadIdx.x;
    float acc = 0.0f;
    float pt3 = p[min(t3, t)];
    for (int t2b = 0; t2b <= t; t2b += ROWBLOCK) {
      int end = min(t + 1 - t2b, ROWBLOCK);
      __syncthreads();
      int t2 = min(t, t2b + (int)threadIdx.x);
      tile[threadIdx.x] = p[t2] * dp[t2];
      __syncthreads();
      for (int t2i = 0; t2i < end; t2i++) {
        float indicator = t2b + t2i == t3 ? 1.0f : 0.0f;
        acc += tile[t2i] * (indicator - pt3);
      }
    }
    if (t3 <= t)
      dx[t3] = acc;
  }
}

__global__ void grad_causal_softmax_bwd_tiles(float *dx, float *ddx,
                                              const float *dp, float *ddp,
                                              const float *p, float *dpp,
                                              int T) {
  __enzyme_autodiff<void>((void *)causal_softmax_bwd_tiles, enzyme_dup, dx,
                          ddx, enzyme_dup, dp, ddp, enzyme_dup, p, dpp,
                          enzyme_const, T);
}

// Squares a row in place until its running sum passes `limit` (a loop left
// at a data-dependent point), then stores the sum.
__device__ void square_until(float *x, float *sums, int rows, int n,
                             float limit) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows)
    return;
  float *row = x + r * n;
  float s = 0.0f;
  for (int j = 0; j < n; j++) {
    row[j] = row[j] * row[j];
    s += row[j];
    if (s > limit)
      break;
  }
  sums[r] = s;
}

__global__ void grad_square_until(float *x, float *dx, float *sums,
                                  float *dsums, int rows, int n, float limit) {
  __enzyme_autodiff<void>((void *)square_until, enzyme_dup, x, dx, enzyme_dup,
                          sums, dsums, enzyme_const, rows, enzyme_const, n,
                          enzyme_const, limit);
}
