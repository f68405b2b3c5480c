// Forward kernels in the idioms of LLM training code (one warp per row,
// cooperative groups reductions, float4 loads, an integer-indexed gather,
// shared-memory tiles), each with an Enzyme gradient request:
//  - encoder: out[bt, c] = wte[tokens[bt], c] + wpe[bt % T, c] (a gather);
//  - layernorm: one warp per row, mean and variance by cg::reduce, float4
//    reads of the row;
//  - online softmax: one warp per row, each lane's running (max, sum) pair
//    merged across the warp by shuffles;
//  - matmul: C = A B with 16x16 shared tiles loaded as float4.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

#include "enzyme.h"

namespace cg = cooperative_groups;

__device__ void encoder(float *out, const int *tokens, const float *wte,
                        const float *wpe, int BT, int T, int C) {
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= BT * C)
    return;
  int bt = idx / C, c = idx % C;
  int token = tokens[bt];
  out[idx] = wte[token * C + c] + wpe[(bt % T) * C + c];
}

__global__ void encoder_kernel(float *out, const int *tokens, const float *wte,
                               const float *wpe, int BT, int T, int C) {
  encoder(out, tokens, wte, wpe, BT, T, C);
}

__global__ void grad_encoder(float *out, float *dout, const int *tokens,
                             const float *wte, float *dwte, const float *wpe,
                             float *dwpe, int BT, int T, int C) {
  __enzyme_autodiff<void>((void *)encoder, enzyme_dup, out, dout,
                          enzyme_const, tokens, enzyme_dup, wte, dwte,
                          enzyme_dup, wpe, dwpe, enzyme_const, BT,
                          enzyme_const, T, enzyme_const, C);
}

// C is a multiple of 4 (float4 reads).
__device__ void layernorm(float *out, const float *inp, const float *weight,
                          const float *bias, int N, int C) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  int row = blockIdx.x * warp.meta_group_size() + warp.meta_group_rank();
  if (row >= N)
    return;
  const float4 *x = reinterpret_cast<const float4 *>(inp + row * C);
  float sum = 0.0f;
  for (int i = warp.thread_rank(); i < C / 4; i += warp.size()) {
    float4 v = x[i];
    sum += v.x + v.y + v.z + v.w;
  }
  float mean = cg::reduce(warp, sum, cg::plus<float>{}) / C;
  float sq = 0.0f;
  for (int i = warp.thread_rank(); i < C / 4; i += warp.size()) {
    float4 v = x[i];
    sq += (v.x - mean) * (v.x - mean) + (v.y - mean) * (v.y - mean) +
          (v.z - mean) * (v.z - mean) + (v.w - mean) * (v.w - mean);
  }
  float rstd = rsqrtf(cg::reduce(warp, sq, cg::plus<float>{}) / C + 1e-5f);
  for (int c = warp.thread_rank(); c < C; c += warp.size()) {
    float n = (inp[row * C + c] - mean) * rstd;
    out[row * C + c] = n * weight[c] + bias[c];
  }
}

__global__ void layernorm_kernel(float *out, const float *inp,
                                 const float *weight, const float *bias, int N,
                                 int C) {
  layernorm(out, inp, weight, bias, N, C);
}

__global__ void grad_layernorm(float *out, float *dout, const float *inp,
                               float *dinp, const float *weight, float *dweight,
                               const float *bias, float *dbias, int N, int C) {
  __enzyme_autodiff<void>((void *)layernorm, enzyme_dup, out, dout, enzyme_dup,
                          inp, dinp, enzyme_dup, weight, dweight, enzyme_dup,
                          bias, dbias, enzyme_const, N, enzyme_const, C);
}

// One warp per row: the running maximum and the sum of exponentials relative
// to it, merged pairwise across the warp. A lane without elements keeps
// (-FLT_MAX, 0), which merges as nothing (-INFINITY would make inf - inf).
__device__ void online_softmax(float *out, const float *inp, int N, int C) {
  int lane = threadIdx.x % 32;
  int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
  if (row >= N)
    return;
  const float *x = inp + row * C;
  float m = -3.402823466e38f, s = 0.0f;
  for (int c = lane; c < C; c += 32) {
    float v = x[c];
    float next = fmaxf(m, v);
    s = s * expf(m - next) + expf(v - next);
    m = next;
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    float mo = __shfl_xor_sync(0xffffffff, m, offset);
    float so = __shfl_xor_sync(0xffffffff, s, offset);
    float next = fmaxf(m, mo);
    s = s * expf(m - next) + so * expf(mo - next);
    m = next;
  }
  for (int c = lane; c < C; c += 32)
    out[row * C + c] = expf(x[c] - m) / s;
}

__global__ void online_softmax_kernel(float *out, const float *inp, int N,
                                      int C) {
  online_softmax(out, inp, N, C);
}

__global__ void grad_online_softmax(float *out, float *dout, const float *inp,
                                    float *dinp, int N, int C) {
  __enzyme_autodiff<void>((void *)online_softmax, enzyme_dup, out, dout,
                          enzyme_dup, inp, dinp, enzyme_const, N, enzyme_const,
                          C);
}

// C[M, N] = A[M, K] B[K, N], 16x16 tiles, K and N multiples of 16; each of
// the 64 threads of a block loads one float4 of each tile. K is a template
// parameter when positive (as templated production kernels fix it), else
// the run-time `k`. The tile loop rewrites shared memory it reads: with a
// fixed K the AD tapes the loop; with a run-time K it checkpoints it, the
// tiles held in the snapshots.
#define TILE 16
template <int KT>
__device__ void matmul(float *Cm, const float *A, const float *B, int M, int N,
                       int k) {
  const int K = KT > 0 ? KT : k;
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE];
  int t = threadIdx.x;              // 0..63
  int tr = t / 4, tc = (t % 4) * 4; // this thread's float4 of a tile
  int row0 = blockIdx.y * TILE, col0 = blockIdx.x * TILE;
  float acc[4] = {0, 0, 0, 0};      // C[row0 + tr, col0 + tc .. tc + 3]
  for (int k0 = 0; k0 < K; k0 += TILE) {
    float4 a = make_float4(0, 0, 0, 0);
    if (row0 + tr < M)
      a = *reinterpret_cast<const float4 *>(&A[(row0 + tr) * K + k0 + tc]);
    float4 b = *reinterpret_cast<const float4 *>(&B[(k0 + tr) * N + col0 + tc]);
    As[tr][tc] = a.x;
    As[tr][tc + 1] = a.y;
    As[tr][tc + 2] = a.z;
    As[tr][tc + 3] = a.w;
    Bs[tr][tc] = b.x;
    Bs[tr][tc + 1] = b.y;
    Bs[tr][tc + 2] = b.z;
    Bs[tr][tc + 3] = b.w;
    __syncthreads();
    for (int kk = 0; kk < TILE; ++kk)
      for (int j = 0; j < 4; ++j)
        acc[j] += As[tr][kk] * Bs[kk][tc + j];
    __syncthreads();
  }
  if (row0 + tr < M)
    for (int j = 0; j < 4; ++j)
      Cm[(row0 + tr) * N + col0 + tc + j] = acc[j];
}

__global__ void matmul_kernel(float *Cm, const float *A, const float *B, int M,
                              int N, int K) {
  matmul<0>(Cm, A, B, M, N, K);
}

__global__ void grad_matmul_k48(float *Cm, float *dC, const float *A,
                                float *dA, const float *B, float *dB, int M,
                                int N) {
  __enzyme_autodiff<void>((void *)matmul<48>, enzyme_dup, Cm, dC, enzyme_dup,
                          A, dA, enzyme_dup, B, dB, enzyme_const, M,
                          enzyme_const, N, enzyme_const, 48);
}

__global__ void grad_matmul(float *Cm, float *dC, const float *A, float *dA,
                            const float *B, float *dB, int M, int N, int K) {
  __enzyme_autodiff<void>((void *)matmul<0>, enzyme_dup, Cm, dC, enzyme_dup, A,
                          dA, enzyme_dup, B, dB, enzyme_const, M, enzyme_const,
                          N, enzyme_const, K);
}
