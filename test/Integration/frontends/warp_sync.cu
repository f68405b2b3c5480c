// __syncwarp between phases of a warp's exchange through shared memory (the
// Volta-era replacement of implicit warp synchronicity): each lane squares
// its value, reads its xor-1 partner's square, overwrites its own slot with
// the product after the warp synchronized, and reads its next lane's
// product. The block's threads all take part (a device whose subgroups are
// narrower than a warp synchronizes the block: Frontends.md).
#include "enzyme.h"

__device__ void warp_mix(const float *x, float *y, int n) {
  __shared__ float s[256];
  int t = threadIdx.x, lane = t % 32, base = t - lane;
  int i = blockIdx.x * blockDim.x + t;
  float v = i < n ? x[i] : 0.0f;
  v = v * v;
  s[t] = v;
  __syncwarp();
  float a = s[base + (lane ^ 1)];
  __syncwarp();
  s[t] = a * v; // the slot reused once the whole warp has read it
  __syncwarp();
  float b = s[base + (lane + 1) % 32];
  if (i < n)
    y[i] = b + v;
}

__global__ void warp_mix_kernel(const float *x, float *y, int n) {
  warp_mix(x, y, n);
}

__global__ void grad_warp_mix(const float *x, float *dx, float *y, float *dy,
                              int n) {
  __enzyme_autodiff<void>((void *)warp_mix, enzyme_dup, x, dx, enzyme_dup, y,
                          dy, enzyme_const, n);
}
