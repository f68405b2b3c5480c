// Row reductions as llm.c's softmax_forward_kernel2 writes them: a max tree
// and a sum tree over one dynamic shared buffer, each step opening with the
// barrier (no barrier between the leaf store and the tree), the block size
// a launch parameter (a halving do-while after clang), the row written with
// exp(x - max) and normalized in place. The max tree is reversed step by
// step from a private tape (its trip count is bounded by the stride's bits),
// the sum tree as a broadcast; the in-place normalization from a global
// tape.
#include "enzyme.h"
#include <math.h>

// out = x - max(row).
__device__ void shift_by_row_max(float *out, const float *inp, int N, int C) {
  extern __shared__ float shared[];
  int idx = blockIdx.x, tid = threadIdx.x, block = blockDim.x;
  const float *x = inp + idx * C;
  float maxval = -INFINITY;
  for (int i = tid; i < C; i += block) maxval = fmaxf(maxval, x[i]);
  shared[tid] = maxval;
  for (int stride = block / 2; stride >= 1; stride /= 2) {
    __syncthreads();
    if (tid < stride) shared[tid] = fmaxf(shared[tid], shared[tid + stride]);
  }
  __syncthreads();
  float offset = shared[0];
  for (int i = tid; i < C; i += block) out[idx * C + i] = x[i] - offset;
}
__global__ void shift_kernel(float *out, const float *inp, int N, int C) { shift_by_row_max(out, inp, N, C); }
__global__ void grad_shift(float *out, float *dout, const float *inp, float *dinp, int N, int C) {
  __enzyme_autodiff<void>((void *)shift_by_row_max, enzyme_dup, out, dout, enzyme_dup, inp, dinp, enzyme_const, N, enzyme_const, C);
}
// out = softmax(row).
__device__ void softmax_rows(float *out, const float *inp, int N, int C) {
  extern __shared__ float shared[];
  int idx = blockIdx.x, tid = threadIdx.x, block = blockDim.x;
  const float *x = inp + idx * C;
  float maxval = -INFINITY;
  for (int i = tid; i < C; i += block) maxval = fmaxf(maxval, x[i]);
  shared[tid] = maxval;
  for (int stride = block / 2; stride >= 1; stride /= 2) {
    __syncthreads();
    if (tid < stride) shared[tid] = fmaxf(shared[tid], shared[tid + stride]);
  }
  __syncthreads();
  float offset = shared[0];
  for (int i = tid; i < C; i += block) out[idx * C + i] = expf(x[i] - offset);
  __syncthreads();
  x = out + idx * C;
  float sumval = 0.0f;
  for (int i = tid; i < C; i += block) sumval += x[i];
  shared[tid] = sumval;
  for (int stride = block / 2; stride >= 1; stride /= 2) {
    __syncthreads();
    if (tid < stride) shared[tid] += shared[tid + stride];
  }
  __syncthreads();
  float sum = shared[0];
  for (int i = tid; i < C; i += block) out[idx * C + i] = x[i] / sum;
}
__global__ void softmax_kernel(float *out, const float *inp, int N, int C) { softmax_rows(out, inp, N, C); }
__global__ void grad_softmax(float *out, float *dout, const float *inp, float *dinp, int N, int C) {
  __enzyme_autodiff<void>((void *)softmax_rows, enzyme_dup, out, dout, enzyme_dup, inp, dinp, enzyme_const, N, enzyme_const, C);
}
