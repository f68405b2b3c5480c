// A mixed-precision gradient that needs a bf16 atomic add: the adjoint of a
// warp-per-row kernel adds into its bf16 input at row * C + lane + 32 k,
// which the AD does not prove thread-exclusive. NVVM and ROCDL have bf16
// atomics; SPIR-V has no 16-bit atomics and refuses it with a located error.
#include <cuda_bf16.h>

#include "enzyme.h"

typedef __nv_bfloat16 floatX;

// One warp per row: the row's f32 mean of squares of bf16 activations
// (a warp reduction by shuffles), then the activations scaled by it, in
// bf16, and the f32 statistic kept for the backward pass.
__device__ void rms_scale(floatX *out, float *rms, const floatX *inp, int N,
                          int C) {
  int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
  int lane = threadIdx.x % 32;
  if (row >= N)
    return;
  const floatX *x = inp + row * C;
  float sum = 0.0f;
  for (int c = lane; c < C; c += 32) {
    float v = (float)x[c];
    sum += v * v;
  }
  for (int offset = 16; offset > 0; offset /= 2)
    sum += __shfl_xor_sync(0xffffffff, sum, offset);
  float s = rsqrtf(sum / C + 1e-5f);
  for (int c = lane; c < C; c += 32)
    out[row * C + c] = (floatX)((float)x[c] * s);
  if (lane == 0)
    rms[row] = s;
}

__global__ void rms_scale_kernel(floatX *out, float *rms, const floatX *inp,
                                 int N, int C) {
  rms_scale(out, rms, inp, N, C);
}

__global__ void grad_rms_scale(floatX *out, floatX *dout, float *rms,
                               float *drms, const floatX *inp, floatX *dinp,
                               int N, int C) {
  __enzyme_autodiff<void>((void *)rms_scale, enzyme_dupnoneed, out, dout,
                          enzyme_dupnoneed, rms, drms, enzyme_dup, inp, dinp,
                          enzyme_const, N, enzyme_const, C);
}

