// The backward kernels an expert writes for the kernels of
// bench/production/kernels.cu: gathers rather than scatters where the
// transpose allows, warp all-reduces whose result every lane holds, the two
// sums a normalization's backward needs in one pass, cheap forward values
// recomputed rather than stored, the matmul's backward as two tiled matmuls.
//
// Every kernel takes the parameters of the generated adjoint grad_<name>
// (same order: each differentiated buffer followed by its shadow) and keeps
// Enzyme's semantics on them, so both can be launched on the same buffers
// and compared: on entry an output's shadow holds the cotangent of the
// output, on exit it is zero; an input's shadow accumulates (+=) the
// gradient. The primal buffers are only read; the forward's outputs in them
// are what a training step has at its backward pass (softmax_backward reads
// the probabilities there, as PyTorch's and llm.c's softmax backwards do).
// A backward needing a second pass (the matmul's dC is read by other blocks,
// so zeroing it must wait) is a sequence of kernels run in order.

#define WARP_SIZE 32
#define FULL_MASK 0xffffffffu

__device__ __forceinline__ float warp_sum(float v) {
  for (int offset = WARP_SIZE / 2; offset > 0; offset >>= 1)
    v += __shfl_xor_sync(FULL_MASK, v, offset);
  return v;
}

// ---------------------------------------------------------------------------
// (a) Layer norm. One warp per row: mean and rstd recomputed (two
// all-reduces over the row), then sum(w dy) and sum(w dy n) in one pass,
// dx += rstd (w dy - mean(w dy) - n mean(w dy n)). dweight and dbias are
// sums over rows: the block's warps add into shared memory, then one global
// atomic per column and block.
#define LN_MAX_C 1024

__global__ void layernorm_backward(float *out, float *dout, const float *inp,
                                   float *dinp, const float *weight,
                                   float *dweight, const float *bias,
                                   float *dbias, int N, int C) {
  __shared__ float dw_block[LN_MAX_C];
  __shared__ float db_block[LN_MAX_C];
  for (int c = threadIdx.x; c < C; c += blockDim.x) {
    dw_block[c] = 0.0f;
    db_block[c] = 0.0f;
  }
  __syncthreads();
  int lane = threadIdx.x % WARP_SIZE;
  int row = blockIdx.x * (blockDim.x / WARP_SIZE) + threadIdx.x / WARP_SIZE;
  if (row < N) {
    const float *x = inp + row * C;
    float *dy = dout + row * C;
    float *dx = dinp + row * C;
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
    float dnorm_sum = 0.0f, dnorm_norm_sum = 0.0f;
    for (int c = lane; c < C; c += WARP_SIZE) {
      float n = (x[c] - mean) * rstd;
      float g = weight[c] * dy[c];
      dnorm_sum += g;
      dnorm_norm_sum += g * n;
    }
    float dnorm_mean = warp_sum(dnorm_sum) / C;
    float dnorm_norm_mean = warp_sum(dnorm_norm_sum) / C;
    for (int c = lane; c < C; c += WARP_SIZE) {
      float n = (x[c] - mean) * rstd;
      float g = dy[c];
      dx[c] += rstd * (weight[c] * g - dnorm_mean - n * dnorm_norm_mean);
      atomicAdd(&dw_block[c], g * n);
      atomicAdd(&db_block[c], g);
      dy[c] = 0.0f;
    }
  }
  __syncthreads();
  for (int c = threadIdx.x; c < C; c += blockDim.x) {
    atomicAdd(&dweight[c], dw_block[c]);
    atomicAdd(&dbias[c], db_block[c]);
  }
}

// ---------------------------------------------------------------------------
// (b) Softmax from its output y (the forward's probabilities in `out`):
// dx += y (dy - sum(dy y)), one all-reduce per row.
__global__ void softmax_backward(float *out, float *dout, const float *inp,
                                 float *dinp, int N, int C) {
  int lane = threadIdx.x % WARP_SIZE;
  int row = blockIdx.x * (blockDim.x / WARP_SIZE) + threadIdx.x / WARP_SIZE;
  if (row >= N)
    return;
  const float *y = out + row * C;
  float *dy = dout + row * C;
  float *dx = dinp + row * C;
  float dot = 0.0f;
  for (int c = lane; c < C; c += WARP_SIZE)
    dot += dy[c] * y[c];
  dot = warp_sum(dot);
  for (int c = lane; c < C; c += WARP_SIZE) {
    dx[c] += y[c] * (dy[c] - dot);
    dy[c] = 0.0f;
  }
}

// ---------------------------------------------------------------------------
// (c) Cross-entropy: dprobs[i, t] += -dloss[i] / probs[i, t] at the target
// only (a gather: one thread per position writes its own element).
__global__ void crossentropy_backward(float *losses, float *dlosses,
                                      const float *probs, float *dprobs,
                                      const int *targets, int BT, int V) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= BT)
    return;
  int at = i * V + targets[i];
  dprobs[at] -= dlosses[i] / probs[at];
  dlosses[i] = 0.0f;
}

// ---------------------------------------------------------------------------
// (d) GELU: the local derivative recomputed from x (tanh once), four
// elements per thread through float4.
#define GELU_SCALE 0.7978845608028654f

__device__ __forceinline__ float gelu_grad(float x) {
  float cube = 0.044715f * x * x * x;
  float th = tanhf(GELU_SCALE * (x + cube));
  float sech2 = 1.0f - th * th;
  return 0.5f * (1.0f + th) +
         0.5f * x * sech2 * GELU_SCALE * (1.0f + 3.0f * 0.044715f * x * x);
}

__global__ void gelu_backward(float *out, float *dout, const float *inp,
                              float *dinp, int N) {
  int i = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
  if (i >= N)
    return;
  float4 x = *reinterpret_cast<const float4 *>(inp + i);
  float4 dy = *reinterpret_cast<const float4 *>(dout + i);
  float4 dx = *reinterpret_cast<const float4 *>(dinp + i);
  dx.x += gelu_grad(x.x) * dy.x;
  dx.y += gelu_grad(x.y) * dy.y;
  dx.z += gelu_grad(x.z) * dy.z;
  dx.w += gelu_grad(x.w) * dy.w;
  *reinterpret_cast<float4 *>(dinp + i) = dx;
  *reinterpret_cast<float4 *>(dout + i) = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
}

// ---------------------------------------------------------------------------
// (e) Embeddings. One thread per (t, c): dwpe[t, c] is a gather over the
// batch (no atomics); dwte needs a scatter (two positions may hold the same
// token), one atomic per output element. Launch T * C threads.
__global__ void encoder_backward(float *out, float *dout, const int *tokens,
                                 const float *wte, float *dwte,
                                 const float *wpe, float *dwpe, int B, int T,
                                 int C) {
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= T * C)
    return;
  int t = idx / C, c = idx - t * C;
  float acc = 0.0f;
  for (int b = 0; b < B; ++b) {
    int bt = b * T + t;
    float g = dout[bt * C + c];
    acc += g;
    atomicAdd(&dwte[tokens[bt] * C + c], g);
    dout[bt * C + c] = 0.0f;
  }
  dwpe[idx] += acc;
}

// ---------------------------------------------------------------------------
// (f) Matmul: dA = dC B^T and dB = A^T dC, each the forward's tiled matmul
// (32x32 shared tiles loaded as float4, 2x2 register blocks, 16x16 threads)
// with the transposed operand read from its tile; then dC = 0.
#define MM_TILE 32

// dA[M, K] += dC[M, N] B[K, N]^T; grid (K / 32, M / 32).
__global__ void matmul_backward_dA(float *Cm, float *dC, const float *A,
                                   float *dA, const float *B, float *dB, int M,
                                   int N, int K) {
  __shared__ float Gs[MM_TILE][MM_TILE]; // dC[row0 + i, j0 + j]
  __shared__ float Bs[MM_TILE][MM_TILE]; // B[col0 + i, j0 + j]
  int tx = threadIdx.x, ty = threadIdx.y;
  int t = ty * 16 + tx;
  int lr = t / 8, lc = (t % 8) * 4;
  int row0 = blockIdx.y * MM_TILE, col0 = blockIdx.x * MM_TILE;
  float acc00 = 0.0f, acc01 = 0.0f, acc10 = 0.0f, acc11 = 0.0f;
  for (int j0 = 0; j0 < N; j0 += MM_TILE) {
    *reinterpret_cast<float4 *>(&Gs[lr][lc]) =
        *reinterpret_cast<const float4 *>(&dC[(row0 + lr) * N + j0 + lc]);
    *reinterpret_cast<float4 *>(&Bs[lr][lc]) =
        *reinterpret_cast<const float4 *>(&B[(col0 + lr) * N + j0 + lc]);
    __syncthreads();
#pragma unroll 8
    for (int jj = 0; jj < MM_TILE; ++jj) {
      float g0 = Gs[2 * ty][jj], g1 = Gs[2 * ty + 1][jj];
      float b0 = Bs[2 * tx][jj], b1 = Bs[2 * tx + 1][jj];
      acc00 += g0 * b0;
      acc01 += g0 * b1;
      acc10 += g1 * b0;
      acc11 += g1 * b1;
    }
    __syncthreads();
  }
  int r = row0 + 2 * ty, c = col0 + 2 * tx;
  dA[r * K + c] += acc00;
  dA[r * K + c + 1] += acc01;
  dA[(r + 1) * K + c] += acc10;
  dA[(r + 1) * K + c + 1] += acc11;
}

// dB[K, N] += A[M, K]^T dC[M, N]; grid (N / 32, K / 32).
__global__ void matmul_backward_dB(float *Cm, float *dC, const float *A,
                                   float *dA, const float *B, float *dB, int M,
                                   int N, int K) {
  __shared__ float As[MM_TILE][MM_TILE]; // A[i0 + i, row0 + k]
  __shared__ float Gs[MM_TILE][MM_TILE]; // dC[i0 + i, col0 + j]
  int tx = threadIdx.x, ty = threadIdx.y;
  int t = ty * 16 + tx;
  int lr = t / 8, lc = (t % 8) * 4;
  int row0 = blockIdx.y * MM_TILE, col0 = blockIdx.x * MM_TILE;
  float acc00 = 0.0f, acc01 = 0.0f, acc10 = 0.0f, acc11 = 0.0f;
  for (int i0 = 0; i0 < M; i0 += MM_TILE) {
    *reinterpret_cast<float4 *>(&As[lr][lc]) =
        *reinterpret_cast<const float4 *>(&A[(i0 + lr) * K + row0 + lc]);
    *reinterpret_cast<float4 *>(&Gs[lr][lc]) =
        *reinterpret_cast<const float4 *>(&dC[(i0 + lr) * N + col0 + lc]);
    __syncthreads();
#pragma unroll 8
    for (int ii = 0; ii < MM_TILE; ++ii) {
      float a0 = As[ii][2 * ty], a1 = As[ii][2 * ty + 1];
      float g0 = Gs[ii][2 * tx], g1 = Gs[ii][2 * tx + 1];
      acc00 += a0 * g0;
      acc01 += a0 * g1;
      acc10 += a1 * g0;
      acc11 += a1 * g1;
    }
    __syncthreads();
  }
  int r = row0 + 2 * ty, c = col0 + 2 * tx;
  dB[r * N + c] += acc00;
  dB[r * N + c + 1] += acc01;
  dB[(r + 1) * N + c] += acc10;
  dB[(r + 1) * N + c + 1] += acc11;
}

// dC = 0 once both products have read it; grid (N / 32, M / 32), float4
// stores (each of the 256 threads one float4 of the 32x32 tile).
__global__ void matmul_backward_zero(float *Cm, float *dC, const float *A,
                                     float *dA, const float *B, float *dB,
                                     int M, int N, int K) {
  int t = threadIdx.y * 16 + threadIdx.x;
  int r = blockIdx.y * MM_TILE + t / 8, c = blockIdx.x * MM_TILE + (t % 8) * 4;
  *reinterpret_cast<float4 *>(&dC[r * N + c]) =
      make_float4(0.0f, 0.0f, 0.0f, 0.0f);
}
