// Forward kernels of a transformer's training step written in the idioms of
// production CUDA (one warp per row with butterfly shuffle reductions, an
// online softmax, float4 vector loads and stores, an integer-indexed gather,
// shared-memory tiles with register blocking), each a __device__ function
// with a __global__ wrapper, and a __global__ grad_<name> asking Enzyme's
// __enzyme_autodiff for its reverse mode: the adjoint Nabla generates.
// grad_<name> marks the output enzyme_dupnoneed (the gradient is wanted, not
// the primal's output again: what an expert's backward computes);
// grad_<name>_dup is the same request with enzyme_dup, which also rewrites
// the output. bench/production/expert.cu holds the backward kernels an
// expert writes for the same kernels, with grad_<name>'s parameters;
// bench/production/run.py times them, test/Integration/
// test_production_bench.py checks that they agree.
//
// Sizes the kernels assume (as production kernels assert them): layernorm and
// softmax rows of any width C (one warp per row, blockDim.x a multiple of
// 32); gelu's N a multiple of 4; matmul's M, N, K multiples of 32.
#include "enzyme.h"

#define WARP_SIZE 32
#define FULL_MASK 0xffffffffu

// Butterfly all-reduce: every lane ends with the warp's sum.
__device__ __forceinline__ float warp_sum(float v) {
  for (int offset = WARP_SIZE / 2; offset > 0; offset >>= 1)
    v += __shfl_xor_sync(FULL_MASK, v, offset);
  return v;
}

// ---------------------------------------------------------------------------
// (a) Layer norm over rows of C: out = (x - mean) * rstd * weight + bias.
// One warp per row, lanes stride the row (coalesced), two all-reduces.
__device__ void layernorm(float *out, const float *inp, const float *weight,
                          const float *bias, int N, int C) {
  int lane = threadIdx.x % WARP_SIZE;
  int row = blockIdx.x * (blockDim.x / WARP_SIZE) + threadIdx.x / WARP_SIZE;
  if (row >= N)
    return;
  const float *x = inp + row * C;
  float sum = 0.0f;
  for (int c = lane; c < C; c += WARP_SIZE)
    sum += x[c];
  float mean = warp_sum(sum) / C;
  float sq = 0.0f;
  for (int c = lane; c < C; c += WARP_SIZE) {
    float d = x[c] - mean;
    sq += d * d;
  }
  float rstd = rsqrtf(warp_sum(sq) / C + 1e-5f);
  float *o = out + row * C;
  for (int c = lane; c < C; c += WARP_SIZE)
    o[c] = (x[c] - mean) * rstd * weight[c] + bias[c];
}

__global__ void layernorm_kernel(float *out, const float *inp,
                                 const float *weight, const float *bias, int N,
                                 int C) {
  layernorm(out, inp, weight, bias, N, C);
}

__global__ void grad_layernorm(float *out, float *dout, const float *inp,
                               float *dinp, const float *weight, float *dweight,
                               const float *bias, float *dbias, int N, int C) {
  __enzyme_autodiff<void>((void *)layernorm, enzyme_dupnoneed, out, dout,
                          enzyme_dup, inp, dinp, enzyme_dup, weight, dweight,
                          enzyme_dup, bias, dbias, enzyme_const, N,
                          enzyme_const, C);
}

__global__ void grad_layernorm_dup(float *out, float *dout, const float *inp,
                                   float *dinp, const float *weight,
                                   float *dweight, const float *bias,
                                   float *dbias, int N, int C) {
  __enzyme_autodiff<void>((void *)layernorm, enzyme_dup, out, dout, enzyme_dup,
                          inp, dinp, enzyme_dup, weight, dweight, enzyme_dup,
                          bias, dbias, enzyme_const, N, enzyme_const, C);
}

// ---------------------------------------------------------------------------
// (b) Online softmax over rows of C: one pass keeps each lane's running
// maximum and the sum of exponentials relative to it (rescaled when the
// maximum grows), the lanes' pairs merged by shuffles, then one pass writes.
__device__ void softmax(float *out, const float *inp, int N, int C) {
  int lane = threadIdx.x % WARP_SIZE;
  int row = blockIdx.x * (blockDim.x / WARP_SIZE) + threadIdx.x / WARP_SIZE;
  if (row >= N)
    return;
  const float *x = inp + row * C;
  float maxval = -3.402823466e38f, sumval = 0.0f;
  for (int c = lane; c < C; c += WARP_SIZE) {
    float v = x[c];
    float m = fmaxf(maxval, v);
    sumval = sumval * __expf(maxval - m) + __expf(v - m);
    maxval = m;
  }
  for (int offset = WARP_SIZE / 2; offset > 0; offset >>= 1) {
    float om = __shfl_xor_sync(FULL_MASK, maxval, offset);
    float os = __shfl_xor_sync(FULL_MASK, sumval, offset);
    float m = fmaxf(maxval, om);
    sumval = sumval * __expf(maxval - m) + os * __expf(om - m);
    maxval = m;
  }
  float norm = 1.0f / sumval;
  float *o = out + row * C;
  for (int c = lane; c < C; c += WARP_SIZE)
    o[c] = __expf(x[c] - maxval) * norm;
}

__global__ void softmax_kernel(float *out, const float *inp, int N, int C) {
  softmax(out, inp, N, C);
}

__global__ void grad_softmax(float *out, float *dout, const float *inp,
                             float *dinp, int N, int C) {
  __enzyme_autodiff<void>((void *)softmax, enzyme_dupnoneed, out, dout,
                          enzyme_dup, inp, dinp, enzyme_const, N, enzyme_const,
                          C);
}

__global__ void grad_softmax_dup(float *out, float *dout, const float *inp,
                                 float *dinp, int N, int C) {
  __enzyme_autodiff<void>((void *)softmax, enzyme_dup, out, dout, enzyme_dup,
                          inp, dinp, enzyme_const, N, enzyme_const, C);
}

// ---------------------------------------------------------------------------
// (c) Cross-entropy of softmax probabilities: losses[i] = -log(probs[i,
// targets[i]]), one thread per position.
__device__ void crossentropy(float *losses, const float *probs,
                             const int *targets, int BT, int V) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < BT)
    losses[i] = -logf(probs[i * V + targets[i]]);
}

__global__ void crossentropy_kernel(float *losses, const float *probs,
                                    const int *targets, int BT, int V) {
  crossentropy(losses, probs, targets, BT, V);
}

__global__ void grad_crossentropy(float *losses, float *dlosses,
                                  const float *probs, float *dprobs,
                                  const int *targets, int BT, int V) {
  __enzyme_autodiff<void>((void *)crossentropy, enzyme_dupnoneed, losses,
                          dlosses, enzyme_dup, probs, dprobs, enzyme_const,
                          targets, enzyme_const, BT, enzyme_const, V);
}

__global__ void grad_crossentropy_dup(float *losses, float *dlosses,
                                      const float *probs, float *dprobs,
                                      const int *targets, int BT, int V) {
  __enzyme_autodiff<void>((void *)crossentropy, enzyme_dup, losses, dlosses,
                          enzyme_dup, probs, dprobs, enzyme_const, targets,
                          enzyme_const, BT, enzyme_const, V);
}

// ---------------------------------------------------------------------------
// (d) GELU, tanh approximation, four elements per thread through float4
// loads and stores.
#define GELU_SCALE 0.7978845608028654f // sqrt(2 / pi)

__device__ __forceinline__ float gelu_scalar(float x) {
  float cube = 0.044715f * x * x * x;
  return 0.5f * x * (1.0f + tanhf(GELU_SCALE * (x + cube)));
}

__device__ void gelu(float *out, const float *inp, int N) {
  int i = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
  if (i >= N)
    return;
  float4 x = *reinterpret_cast<const float4 *>(inp + i);
  float4 y;
  y.x = gelu_scalar(x.x);
  y.y = gelu_scalar(x.y);
  y.z = gelu_scalar(x.z);
  y.w = gelu_scalar(x.w);
  *reinterpret_cast<float4 *>(out + i) = y;
}

__global__ void gelu_kernel(float *out, const float *inp, int N) {
  gelu(out, inp, N);
}

__global__ void grad_gelu(float *out, float *dout, const float *inp,
                          float *dinp, int N) {
  __enzyme_autodiff<void>((void *)gelu, enzyme_dupnoneed, out, dout, enzyme_dup,
                          inp, dinp, enzyme_const, N);
}

__global__ void grad_gelu_dup(float *out, float *dout, const float *inp,
                              float *dinp, int N) {
  __enzyme_autodiff<void>((void *)gelu, enzyme_dup, out, dout, enzyme_dup, inp,
                          dinp, enzyme_const, N);
}

// ---------------------------------------------------------------------------
// (e) Token and position embeddings: out[b, t, :] = wte[tokens[b, t], :] +
// wpe[t, :], one thread per output element.
__device__ void encoder(float *out, const int *tokens, const float *wte,
                        const float *wpe, int B, int T, int C) {
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= B * T * C)
    return;
  int bt = idx / C, c = idx - bt * C;
  int t = bt % T;
  out[idx] = wte[tokens[bt] * C + c] + wpe[t * C + c];
}

__global__ void encoder_kernel(float *out, const int *tokens, const float *wte,
                               const float *wpe, int B, int T, int C) {
  encoder(out, tokens, wte, wpe, B, T, C);
}

__global__ void grad_encoder(float *out, float *dout, const int *tokens,
                             const float *wte, float *dwte, const float *wpe,
                             float *dwpe, int B, int T, int C) {
  __enzyme_autodiff<void>((void *)encoder, enzyme_dupnoneed, out, dout,
                          enzyme_const, tokens, enzyme_dup, wte, dwte,
                          enzyme_dup, wpe, dwpe, enzyme_const, B, enzyme_const,
                          T, enzyme_const, C);
}

__global__ void grad_encoder_dup(float *out, float *dout, const int *tokens,
                                 const float *wte, float *dwte,
                                 const float *wpe, float *dwpe, int B, int T,
                                 int C) {
  __enzyme_autodiff<void>((void *)encoder, enzyme_dup, out, dout, enzyme_const,
                          tokens, enzyme_dup, wte, dwte, enzyme_dup, wpe, dwpe,
                          enzyme_const, B, enzyme_const, T, enzyme_const, C);
}

// ---------------------------------------------------------------------------
// (f) C[M, N] = A[M, K] B[K, N]: 32x32 tiles of A and B in shared memory,
// each of the 256 threads (a 16x16 block) loading one float4 of each tile
// and accumulating a 2x2 block of C in registers. K is a run-time argument.
#define MM_TILE 32

__device__ void matmul(float *Cm, const float *A, const float *B, int M, int N,
                       int K) {
  __shared__ float As[MM_TILE][MM_TILE];
  __shared__ float Bs[MM_TILE][MM_TILE];
  int tx = threadIdx.x, ty = threadIdx.y;
  int t = ty * 16 + tx;
  int lr = t / 8, lc = (t % 8) * 4; // this thread's float4 of a tile
  int row0 = blockIdx.y * MM_TILE, col0 = blockIdx.x * MM_TILE;
  float acc00 = 0.0f, acc01 = 0.0f, acc10 = 0.0f, acc11 = 0.0f;
  for (int k0 = 0; k0 < K; k0 += MM_TILE) {
    *reinterpret_cast<float4 *>(&As[lr][lc]) =
        *reinterpret_cast<const float4 *>(&A[(row0 + lr) * K + k0 + lc]);
    *reinterpret_cast<float4 *>(&Bs[lr][lc]) =
        *reinterpret_cast<const float4 *>(&B[(k0 + lr) * N + col0 + lc]);
    __syncthreads();
#pragma unroll 8
    for (int kk = 0; kk < MM_TILE; ++kk) {
      float a0 = As[2 * ty][kk], a1 = As[2 * ty + 1][kk];
      float b0 = Bs[kk][2 * tx], b1 = Bs[kk][2 * tx + 1];
      acc00 += a0 * b0;
      acc01 += a0 * b1;
      acc10 += a1 * b0;
      acc11 += a1 * b1;
    }
    __syncthreads();
  }
  int r = row0 + 2 * ty, c = col0 + 2 * tx;
  Cm[r * N + c] = acc00;
  Cm[r * N + c + 1] = acc01;
  Cm[(r + 1) * N + c] = acc10;
  Cm[(r + 1) * N + c + 1] = acc11;
}

__global__ void matmul_kernel(float *Cm, const float *A, const float *B, int M,
                              int N, int K) {
  matmul(Cm, A, B, M, N, K);
}

__global__ void grad_matmul(float *Cm, float *dC, const float *A, float *dA,
                            const float *B, float *dB, int M, int N, int K) {
  __enzyme_autodiff<void>((void *)matmul, enzyme_dupnoneed, Cm, dC, enzyme_dup,
                          A, dA, enzyme_dup, B, dB, enzyme_const, M,
                          enzyme_const, N, enzyme_const, K);
}

__global__ void grad_matmul_dup(float *Cm, float *dC, const float *A, float *dA,
                                const float *B, float *dB, int M, int N,
                                int K) {
  __enzyme_autodiff<void>((void *)matmul, enzyme_dup, Cm, dC, enzyme_dup, A, dA,
                          enzyme_dup, B, dB, enzyme_const, M, enzyme_const, N,
                          enzyme_const, K);
}
