// Broadcast shuffles (`__shfl_sync(mask, v, src[, width])`): online softmax
// hands lane 0's running maximum and sum to its warp this way. The adjoint
// of a broadcast gathers every reader's adjoint into the source lane, whose
// place is counted within the shuffle's segment of consecutive threads --
// also on devices whose subgroups are narrower than a warp (lavapipe's 8
// lanes gave lanes 8, 16 and 24 the source's adjoint too).
#include "enzyme.h"

// y[i] = x[i] * (lane 0's x) over whole warps.
__device__ void scale_by_lane0(const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = x[i];
  float b = __shfl_sync(0xffffffffu, v, 0);
  y[i] = v * b;
}

// y[i] = x[i] * (x of lane 3 of the thread's 16-lane segment).
__device__ void scale_by_segment_lane3(const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = x[i];
  float b = __shfl_sync(0xffffffffu, v, 3, 16);
  y[i] = v * b;
}

__global__ void scale_by_lane0_kernel(const float *x, float *y) {
  scale_by_lane0(x, y);
}
__global__ void scale_by_segment_lane3_kernel(const float *x, float *y) {
  scale_by_segment_lane3(x, y);
}
__global__ void grad_scale_by_lane0(const float *x, float *dx, float *y,
                                    float *dy) {
  __enzyme_autodiff<void>((void *)scale_by_lane0, enzyme_dup, x, dx,
                          enzyme_dup, y, dy);
}
__global__ void grad_scale_by_segment_lane3(const float *x, float *dx,
                                            float *y, float *dy) {
  __enzyme_autodiff<void>((void *)scale_by_segment_lane3, enzyme_dup, x, dx,
                          enzyme_dup, y, dy);
}
