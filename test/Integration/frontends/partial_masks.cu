// Warp operations over partial masks, as production CUDA writes them: the
// second stage of a block reduction run by the lanes that hold a warp's
// partial (`active = __ballot_sync(mask, tid < warps); if (tid < warps) sum =
// warp_sum(active, sum)`, with sm_80's __reduce_add_sync for integers), a
// block smaller than a warp whose mask names its lanes (0xffff for 16),
// warp-aggregated atomics over __activemask() (stream compaction), half a
// warp exchanging through shared memory behind __syncwarp(0xffff) and voting
// with __any_sync/__all_sync over it, and cooperative groups' 16-lane tiles.
#include "enzyme.h"

#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

namespace cg = cooperative_groups;

template <typename T> __device__ __forceinline__ T warp_sum(unsigned mask, T v) {
  for (int offset = 16; offset > 0; offset /= 2)
    v += __shfl_down_sync(mask, v, offset);
  return v;
}

#if __CUDA_ARCH__ >= 800
template <> __device__ __forceinline__ int warp_sum<int>(unsigned mask, int v) {
  return __reduce_add_sync(mask, v);
}
#endif

// out[block] = sum of in[i]^2 over the block's grid-stride elements.
template <typename T, unsigned BLOCK>
__device__ void block_sum_squares(const T *__restrict__ in,
                                  T *__restrict__ out, unsigned n) {
  __shared__ T partial[BLOCK / 32 > 0 ? BLOCK / 32 : 1];
  const unsigned tail = BLOCK & 31;
  const unsigned mask = 0xffffffffu >> (tail ? 32 - tail : 0);
  T sum = 0;
  for (unsigned i = blockIdx.x * BLOCK + threadIdx.x; i < n;
       i += BLOCK * gridDim.x)
    sum += in[i] * in[i];
  sum = warp_sum<T>(mask, sum);
  if (threadIdx.x % 32 == 0)
    partial[threadIdx.x / 32] = sum;
  __syncthreads();
  const unsigned warps = BLOCK / 32 > 0 ? BLOCK / 32 : 1;
  const unsigned holders = __ballot_sync(mask, threadIdx.x < warps);
  if (threadIdx.x < warps) {
    sum = partial[threadIdx.x];
    sum = warp_sum<T>(holders, sum);
  }
  if (threadIdx.x == 0)
    out[blockIdx.x] = sum;
}

__global__ void sum_squares_f256(const float *in, float *out, unsigned n) {
  block_sum_squares<float, 256>(in, out, n);
}
__global__ void sum_squares_f16(const float *in, float *out, unsigned n) {
  block_sum_squares<float, 16>(in, out, n);
}
__global__ void sum_squares_i128(const int *in, int *out, unsigned n) {
  block_sum_squares<int, 128>(in, out, n);
}
__global__ void sum_squares_i8(const int *in, int *out, unsigned n) {
  block_sum_squares<int, 8>(in, out, n);
}
__global__ void grad_sum_squares_f256(const float *in, float *din, float *out,
                                      float *dout, unsigned n) {
  __enzyme_autodiff<void>((void *)block_sum_squares<float, 256>, enzyme_dup, in, din,
                    enzyme_dupnoneed, out, dout, enzyme_const, n);
}
__global__ void grad_sum_squares_f16(const float *in, float *din, float *out,
                                     float *dout, unsigned n) {
  __enzyme_autodiff<void>((void *)block_sum_squares<float, 16>, enzyme_dup, in, din,
                    enzyme_dupnoneed, out, dout, enzyme_const, n);
}

// Warp-aggregated atomics: one atomicAdd per warp reserves the slots of the
// lanes that take the branch.
__device__ __forceinline__ int reserve_slot(int *counter) {
  const unsigned active = __activemask();
  const int lane = threadIdx.x % 32;
  const int leader = __ffs(active) - 1;
  const int rank = __popc(active & ((1u << lane) - 1u));
  int base = 0;
  if (lane == leader)
    base = atomicAdd(counter, __popc(active));
  base = __shfl_sync(active, base, leader);
  return base + rank;
}

// out[slot] = 2 x[i] for every positive x[i], in an order the atomics pick.
__device__ void keep_positive(const float *x, float *out, int *count, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && x[i] > 0.0f)
    out[reserve_slot(count)] = 2.0f * x[i];
}

__global__ void keep_positive_kernel(const float *x, float *out, int *count,
                                     int n) {
  keep_positive(x, out, count, n);
}
__global__ void grad_keep_positive(const float *x, float *dx, float *out,
                                   float *dout, int *count, int n) {
  __enzyme_autodiff<void>((void *)keep_positive, enzyme_dup, x, dx, enzyme_dup, out,
                    dout, enzyme_const, count, enzyme_const, n);
}

// The low half of each warp pairs neighbours through shared memory, then
// asks whether any (all) of its lanes saw a sum above 1.
__device__ void half_warp_pairs(const float *x, float *y, int *votes) {
  __shared__ float s[1024];
  const int t = threadIdx.x, lane = t % 32;
  float v = x[t] * x[t];
  if (lane < 16) {
    s[t] = v;
    __syncwarp(0x0000ffffu);
    v += s[t ^ 1];
    const int any = __any_sync(0x0000ffffu, v > 1.0f);
    const int all = __all_sync(0x0000ffffu, v > 1.0f);
    votes[t] = 2 * any + all;
  }
  y[t] = v;
}

__global__ void half_warp_pairs_kernel(const float *x, float *y, int *votes) {
  half_warp_pairs(x, y, votes);
}
__global__ void grad_half_warp_pairs(const float *x, float *dx, float *y,
                                     float *dy, int *votes) {
  __enzyme_autodiff<void>((void *)half_warp_pairs, enzyme_dup, x, dx, enzyme_dup, y,
                    dy, enzyme_const, votes);
}

// y[i] = x[i] * (sum of x over the thread's 16-lane tile).
__device__ void tile16_scale(const float *x, float *y) {
  cg::thread_block_tile<16> tile =
      cg::tiled_partition<16>(cg::this_thread_block());
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  y[i] = x[i] * cg::reduce(tile, x[i], cg::plus<float>());
}

__global__ void tile16_scale_kernel(const float *x, float *y) {
  tile16_scale(x, y);
}
__global__ void grad_tile16_scale(const float *x, float *dx, float *y,
                                  float *dy) {
  __enzyme_autodiff<void>((void *)tile16_scale, enzyme_dup, x, dx, enzyme_dup, y,
                    dy);
}
