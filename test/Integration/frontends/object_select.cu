// Pointers that select between two buffers: a source chosen per block and
// a destination chosen per element (`cond ? a : b`), read and written
// through the selected pointer, with a neighbour read through it too.
#include "enzyme.h"

__device__ void pick(const float *a, const float *b, float *y1, float *y2,
                     int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  const float *src = (blockIdx.x & 1) ? a : b;
  float *dst = (i % 3 == 0) ? y1 : y2;
  float v = src[i] * src[i];
  dst[i] = v + (i > 0 ? src[i - 1] : 0.0f);
}

__global__ void pick_kernel(const float *a, const float *b, float *y1,
                            float *y2, int n) {
  pick(a, b, y1, y2, n);
}

__global__ void grad_pick(const float *a, float *da, const float *b,
                          float *db, float *y1, float *dy1, float *y2,
                          float *dy2, int n) {
  __enzyme_autodiff<void>((void *)pick, enzyme_dup, a, da, enzyme_dup, b, db,
                          enzyme_dup, y1, dy1, enzyme_dup, y2, dy2,
                          enzyme_const, n);
}
