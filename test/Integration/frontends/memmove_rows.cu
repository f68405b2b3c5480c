// memmove within one buffer (overlapping ranges), as production code shifts
// a window or a ring buffer in place (test_production_idioms.py): each
// thread squares its row of 8, then moves its first 7 elements one place
// right (the copy must run from the last element down) and a second row one
// place left (from the first up), refilling its end.
#include "enzyme.h"

__device__ void shift_rows(float *a, float *b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    for (int k = 0; k < 8; ++k)
      a[8 * i + k] = a[8 * i + k] * a[8 * i + k];
    __builtin_memmove(a + 8 * i + 1, a + 8 * i, 7 * sizeof(float));
    __builtin_memmove(b + 8 * i, b + 8 * i + 1, 7 * sizeof(float));
    b[8 * i + 7] = a[8 * i];
  }
}

__global__ void shift_kernel(float *a, float *b, int n) { shift_rows(a, b, n); }

__global__ void grad_shift(float *a, float *da, float *b, float *db, int n) {
  __enzyme_autodiff<void>((void *)shift_rows, enzyme_dup, a, da, enzyme_dup, b,
                          db, enzyme_const, n);
}
