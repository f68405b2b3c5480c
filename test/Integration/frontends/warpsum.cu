// A __shfl_down_sync warp reduction (blocks of 32 threads): lane 0 of each
// warp writes the sum of sin(x) over its warp.
#include "enzyme.h"

__device__ void warpsum(const float *x, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = i < n ? sinf(x[i]) : 0.0f;
  for (int offset = 16; offset > 0; offset /= 2)
    v += __shfl_down_sync(0xffffffffu, v, offset);
  if ((threadIdx.x & 31) == 0)
    out[i / 32] = v;
}

__global__ void warpsum_kernel(const float *x, float *out, int n) {
  warpsum(x, out, n);
}

__global__ void grad_warpsum(const float *x, float *dx, float *out, float *dout,
                             int n) {
  __enzyme_autodiff<void>((void *)warpsum, enzyme_dup, x, dx, enzyme_dup, out,
                          dout, enzyme_const, n);
}
