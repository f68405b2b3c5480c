// Pointers that choose between buffers: a source chosen per block and
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

// Control flow choosing among three buffers (a phi of pointers, as stencils
// pick a neighbour from the halo or the interior), read at an index chosen
// with it, and a written buffer chosen the same way.
__device__ void halo(const float *left, const float *mid, const float *right,
                     float *y, float *edges, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  const float *src;
  float *dst;
  int j;
  if (i == 0) {
    src = left;
    j = i + 3;
    dst = edges;
  } else if (i == n - 1) {
    src = right;
    j = i % 4;
    dst = edges;
  } else {
    src = mid;
    j = i - 1;
    dst = y;
  }
  float v = src[j];
  dst[i] = v * v + mid[i];
}

__global__ void halo_kernel(const float *left, const float *mid,
                            const float *right, float *y, float *edges,
                            int n) {
  halo(left, mid, right, y, edges, n);
}

__global__ void grad_halo(const float *left, float *dleft, const float *mid,
                          float *dmid, const float *right, float *dright,
                          float *y, float *dy, float *edges, float *dedges,
                          int n) {
  __enzyme_autodiff<void>((void *)halo, enzyme_dup, left, dleft, enzyme_dup,
                          mid, dmid, enzyme_dup, right, dright, enzyme_dup, y,
                          dy, enzyme_dup, edges, dedges, enzyme_const, n);
}
