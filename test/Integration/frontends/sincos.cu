// Sines and cosines taken together, as production code takes them:
// curand's Box-Muller (`sincosf(2 pi u2, &s, &c)` scaled by
// sqrt(-2 log u1)), an FFT stage's twiddle factors (`sincospif`), a
// rotation with the fast intrinsic (`__sincosf`) and a double-precision
// phase (`sincos`). With -nocudalib they are libdevice calls returning
// through pointers (`__nv_sincosf`, `__nv_sincospif`, `__nv_fast_sincosf`,
// `__nv_sincos`), which the raise turns into a sine, a cosine and stores.
#include "enzyme.h"

__device__ void box_muller(const float *u1, const float *u2, float *z0,
                           float *z1, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  float r = sqrtf(-2.0f * logf(u1[i]));
  float s, c;
  sincosf(6.2831853f * u2[i], &s, &c);
  z0[i] = r * c;
  z1[i] = r * s;
}

__global__ void box_muller_kernel(const float *u1, const float *u2, float *z0,
                                  float *z1, int n) {
  box_muller(u1, u2, z0, z1, n);
}

__global__ void grad_box_muller(const float *u1, float *du1, const float *u2,
                                float *du2, float *z0, float *dz0, float *z1,
                                float *dz1, int n) {
  __enzyme_autodiff<void>((void *)box_muller, enzyme_dup, u1, du1, enzyme_dup,
                          u2, du2, enzyme_dup, z0, dz0, enzyme_dup, z1, dz1,
                          enzyme_const, n);
}

// One radix-2 stage: y[k] = x[k] + w x[k + h], y[k + h] = x[k] - w x[k + h]
// with w = exp(-2 pi i k / n) from sincospif, on interleaved complex data;
// the phase is scaled by a differentiated `shift` (a fractional delay).
__device__ void fft_stage(const float2 *x, float2 *y, const float *shift,
                          int n) {
  int k = blockIdx.x * blockDim.x + threadIdx.x;
  int h = n / 2;
  if (k >= h)
    return;
  float s, c;
  sincospif(-2.0f * (k + shift[0]) / n, &s, &c);
  float2 a = x[k], b = x[k + h];
  float2 wb = make_float2(c * b.x - s * b.y, c * b.y + s * b.x);
  y[k] = make_float2(a.x + wb.x, a.y + wb.y);
  y[k + h] = make_float2(a.x - wb.x, a.y - wb.y);
}

__global__ void fft_stage_kernel(const float2 *x, float2 *y,
                                 const float *shift, int n) {
  fft_stage(x, y, shift, n);
}

__global__ void grad_fft_stage(const float2 *x, float2 *dx, float2 *y,
                               float2 *dy, const float *shift, float *dshift,
                               int n) {
  __enzyme_autodiff<void>((void *)fft_stage, enzyme_dup, x, dx, enzyme_dup, y,
                          dy, enzyme_dup, shift, dshift, enzyme_const, n);
}

// Points rotated by their angle (the fast intrinsic).
__device__ void rotate(const float *px, const float *py, const float *angle,
                       float *qx, float *qy, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  float s, c;
  __sincosf(angle[i], &s, &c);
  qx[i] = c * px[i] - s * py[i];
  qy[i] = s * px[i] + c * py[i];
}

__global__ void rotate_kernel(const float *px, const float *py,
                              const float *angle, float *qx, float *qy,
                              int n) {
  rotate(px, py, angle, qx, qy, n);
}

__global__ void grad_rotate(const float *px, float *dpx, const float *py,
                            float *dpy, const float *angle, float *dangle,
                            float *qx, float *dqx, float *qy, float *dqy,
                            int n) {
  __enzyme_autodiff<void>((void *)rotate, enzyme_dup, px, dpx, enzyme_dup, py,
                          dpy, enzyme_dup, angle, dangle, enzyme_dup, qx, dqx,
                          enzyme_dup, qy, dqy, enzyme_const, n);
}
