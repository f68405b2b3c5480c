// CUB's block- and warp-level primitives as production kernels use them
// (cub::BlockReduce, cub::WarpReduce, cub::BlockScan from the CUDA toolkit's
// CCCL headers): their shuffles are PTX inline assembly, a word shuffle or a
// shuffle whose valid lanes add (f32, u32/s32, and 64-bit values as two word
// shuffles), which the raise evaluates into warp shuffles (ShuffleAsm.cpp).
// Sums of squares per block, a max per warp, an inclusive scan, an exclusive
// integer scan, a double sum, and their gradients through Enzyme's requests.
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/warp/warp_reduce.cuh>

#include "enzyme.h"

constexpr int kBlock = 128;

template <cub::BlockReduceAlgorithm Algorithm>
__device__ void block_norm(const float *x, float *out, int n) {
  using BlockReduce = cub::BlockReduce<float, kBlock, Algorithm>;
  __shared__ typename BlockReduce::TempStorage temp;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = i < n ? x[i] * x[i] : 0.0f;
  float s = BlockReduce(temp).Sum(v);
  if (threadIdx.x == 0)
    out[blockIdx.x] = s;
}
__global__ void block_norm_kernel(const float *x, float *out, int n) {
  block_norm<cub::BLOCK_REDUCE_WARP_REDUCTIONS>(x, out, n);
}
__global__ void grad_block_norm(const float *x, float *dx, float *out,
                                float *dout, int n) {
  __enzyme_autodiff<void>(
      (void *)block_norm<cub::BLOCK_REDUCE_WARP_REDUCTIONS>, enzyme_dup, x,
      dx, enzyme_dup, out, dout, enzyme_const, n);
}
__global__ void grad_block_norm_raking(const float *x, float *dx, float *out,
                                       float *dout, int n) {
  __enzyme_autodiff<void>((void *)block_norm<cub::BLOCK_REDUCE_RAKING>,
                          enzyme_dup, x, dx, enzyme_dup, out, dout,
                          enzyme_const, n);
}

// One maximum per warp of the block: a generic operator, plain shuffles.
__device__ void warp_max(const float *x, float *out, int n) {
  using WarpReduce = cub::WarpReduce<float>;
  __shared__ typename WarpReduce::TempStorage temp[kBlock / 32];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int warp = threadIdx.x / 32;
  float v = i < n ? sinf(x[i]) : -2.0f;
  float m = WarpReduce(temp[warp]).Reduce(v, ::cuda::maximum<>{});
  if (threadIdx.x % 32 == 0)
    out[blockIdx.x * (kBlock / 32) + warp] = m;
}
__global__ void warp_max_kernel(const float *x, float *out, int n) {
  warp_max(x, out, n);
}
__global__ void grad_warp_max(const float *x, float *dx, float *out,
                              float *dout, int n) {
  __enzyme_autodiff<void>((void *)warp_max, enzyme_dup, x, dx, enzyme_dup,
                          out, dout, enzyme_const, n);
}

__device__ void scan_squares(const float *x, float *y, int n) {
  using BlockScan = cub::BlockScan<float, kBlock>;
  __shared__ typename BlockScan::TempStorage temp;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = i < n ? x[i] * x[i] : 0.0f;
  float r;
  BlockScan(temp).InclusiveSum(v, r);
  if (i < n)
    y[i] = r;
}
__global__ void scan_squares_kernel(const float *x, float *y, int n) {
  scan_squares(x, y, n);
}
__global__ void grad_scan_squares(const float *x, float *dx, float *y,
                                  float *dy, int n) {
  __enzyme_autodiff<void>((void *)scan_squares, enzyme_dup, x, dx,
                          enzyme_dup, y, dy, enzyme_const, n);
}

// Stream compaction's offsets: an exclusive scan of integer flags.
__global__ void compact_offsets(const float *x, int *offsets, int n) {
  using BlockScan = cub::BlockScan<int, kBlock>;
  __shared__ typename BlockScan::TempStorage temp;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int keep = i < n && x[i] > 0.0f;
  int offset;
  BlockScan(temp).ExclusiveSum(keep, offset);
  if (i < n)
    offsets[i] = offset;
}

// Sums in double and in 64-bit integers: two word shuffles per step.
__global__ void block_sum_f64(const double *x, double *out,
                              unsigned long long *count, int n) {
  using Reduce = cub::BlockReduce<double, kBlock>;
  using Count = cub::BlockReduce<unsigned long long, kBlock>;
  __shared__ typename Reduce::TempStorage temp;
  __shared__ typename Count::TempStorage countTemp;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  double v = i < n ? x[i] : 0.0;
  double s = Reduce(temp).Sum(v);
  unsigned long long c =
      Count(countTemp).Sum(i < n ? (unsigned long long)(i + 1) << 31 : 0ull);
  if (threadIdx.x == 0) {
    out[blockIdx.x] = s;
    count[blockIdx.x] = c;
  }
}
