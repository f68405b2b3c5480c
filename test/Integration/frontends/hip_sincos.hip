// HIP: points rotated by their angle with sincosf (OCML's
// __ocml_sincos_f32, the cosine stored through a private pointer), and the
// gradient with respect to points and angles.
#include "hip_min.h"
#include "enzyme.h"

__device__ void rotate(const float *px, const float *py, const float *angle,
                       float *qx, float *qy, int n) {
  int i = hipBlockIdx_x * hipBlockDim_x + hipThreadIdx_x;
  if (i >= n)
    return;
  float s, c;
  sincosf(angle[i], &s, &c);
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
