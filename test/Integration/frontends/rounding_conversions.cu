// CUDA's conversion intrinsics with a rounding mode (libdevice's
// __nv_float2int_rd and friends): float to integer rounds as named, and the
// result feeds a differentiated float computation.
#include "enzyme.h"

__device__ void quantize(const float *x, int *q, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  float v = x[i];
  q[4 * i] = __float2int_rd(v);
  q[4 * i + 1] = __float2int_ru(v);
  q[4 * i + 2] = __float2int_rn(v);
  q[4 * i + 3] = __float2int_rz(v);
  // Straight-through: the rounded value's gradient is zero, the scale's not.
  y[i] = v * v + __int2float_rn(__float2int_rd(v));
}

__global__ void quantize_kernel(const float *x, int *q, float *y, int n) {
  quantize(x, q, y, n);
}

__global__ void grad_quantize(const float *x, float *dx, int *q, float *y,
                              float *dy, int n) {
  __enzyme_autodiff<void>((void *)quantize, enzyme_dup, x, dx, enzyme_const,
                          q, enzyme_dup, y, dy, enzyme_const, n);
}
