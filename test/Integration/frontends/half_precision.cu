// Half and bfloat16 storage as mixed-precision kernels keep activations:
// cuda_fp16/cuda_bf16 convert (cvt.f32.f16, cvt.rn.f16.f32, cvt.rn.bf16.f32)
// and pack (cvt.rn.f16x2.f32, mov.b32) in inline assembly.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

// y = half(x * scale), b = bf16(x * scale) + x as float, per element.
__global__ void scale_half(const __half *x, __half *y,
                           __nv_bfloat16 *b, float *widened, float scale,
                           int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = __half2float(x[i]) * scale;
    y[i] = __float2half(v);
    b[i] = __float2bfloat16(v);
    widened[i] = __bfloat162float(b[i]) + __half2float(x[i]);
  }
}

// Pairs: (a + b, a * b) of each half2, rounded once.
__global__ void pair_ops(const __half2 *in, __half2 *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float2 f = __half22float2(in[i]);
    out[i] = __floats2half2_rn(f.x + f.y, f.x * f.y);
  }
}
