// Warp votes and sm_80 warp reductions as production kernels use them: a
// ballot counted with __popc, __any_sync / __all_sync deciding a branch, and
// __reduce_add_sync over lane ids; the float output's gradient depends on the
// votes (piecewise constant).
#include "enzyme.h"

__device__ void vote_scale(const float *x, float *y, int *counts) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = x[i];
  unsigned positive = __ballot_sync(0xffffffffu, v > 0.0f);
  int n = __popc(positive);
  bool any_big = __any_sync(0xffffffffu, v > 1.5f);
  bool all_small = __all_sync(0xffffffffu, fabsf(v) < 2.5f);
  int lane_sum = __reduce_add_sync(0xffffffffu, threadIdx.x % 32);
  unsigned lane_max = __reduce_max_sync(0xffffffffu, (unsigned)(i % 7));
  y[i] = v * n + (any_big ? v * v : 0.0f) + (all_small ? 1.0f : 0.0f);
  if (threadIdx.x % 32 == 0)
    counts[i / 32] = n + 1000 * lane_sum + 1000000 * (int)lane_max;
}

__global__ void vote_scale_kernel(const float *x, float *y, int *counts) {
  vote_scale(x, y, counts);
}

__global__ void grad_vote_scale(const float *x, float *dx, float *y, float *dy,
                                int *counts) {
  __enzyme_autodiff<void>((void *)vote_scale, enzyme_dup, x, dx, enzyme_dup, y,
                          dy, enzyme_const, counts);
}
