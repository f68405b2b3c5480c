// A differentiated value stored into a `__device__` variable is refused with
// a located error (Enzyme refuses an active global without a shadow too): the
// block exchanges squares through module-scope memory, and a gradient that
// ignored the store would be zero with no error.
#include "enzyme.h"

__device__ float g_stash[256];

__device__ void exchanged(const float *x, float *y) {
  int i = threadIdx.x;
  g_stash[i] = x[i] * x[i];
  __syncthreads();
  y[i] = 3.0f * g_stash[i ^ 1];
}

__global__ void grad_exchanged(const float *x, float *dx, float *y,
                               float *dy) {
  __enzyme_autodiff<void>((void *)exchanged, enzyme_dup, x, dx, enzyme_dup, y,
                          dy);
}
