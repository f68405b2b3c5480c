// A double-precision phase through `sincos(x, &s, &c)` (libdevice's
// `__nv_sincos`): NVVM and ROCDL have f64 sine and cosine; SPIR-V's
// GLSL.std.450 has not (a located error, see test_sincos.py).
#include "enzyme.h"

__device__ void phase(const double *x, double *p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  double s, c;
  sincos(x[i], &s, &c);
  p[i] = s * c + c;
}

__global__ void phase_kernel(const double *x, double *p, int n) {
  phase(x, p, n);
}

__global__ void grad_phase(const double *x, double *dx, double *p, double *dp,
                           int n) {
  __enzyme_autodiff<void>((void *)phase, enzyme_dup, x, dx, enzyme_dup, p, dp,
                          enzyme_const, n);
}
