// Floats moved through integer operations, as production CUDA does it: a
// shuffle of __float_as_int(v) (silent wrong gradient 2 of issue "Real CUDA
// code in") and an arg-max warp reduction of a {value, index} pair shuffled
// field by field (float_bits_f64.cu: a double in two 32-bit halves).
#include "enzyme.h"

__device__ void shuffle_bits(const float *x, float *y) {
  int i = threadIdx.x;
  float v = x[i] * x[i];
  int b = __shfl_xor_sync(0xffffffffu, __builtin_bit_cast(int, v), 1);
  y[i] = 2.0f * __builtin_bit_cast(float, b);
}

__global__ void shuffle_bits_kernel(const float *x, float *y) {
  shuffle_bits(x, y);
}

__global__ void grad_shuffle_bits(const float *x, float *dx, float *y,
                                  float *dy) {
  __enzyme_autodiff<void>((void *)shuffle_bits, enzyme_dup, x, dx, enzyme_dup,
                          y, dy);
}

struct MaxLoc {
  float value;
  int index;
};

__device__ MaxLoc shuffle_xor(MaxLoc a, int offset) {
  MaxLoc b;
  b.value = __builtin_bit_cast(
      float, __shfl_xor_sync(0xffffffffu, __builtin_bit_cast(int, a.value),
                             offset));
  b.index = __shfl_xor_sync(0xffffffffu, a.index, offset);
  return b;
}

// y[i] = x[i] - max over the warp; where[0] = the arg-max lane.
__device__ void shift_by_max(const float *x, float *y, int *where) {
  int i = threadIdx.x;
  MaxLoc m{x[i], i};
  for (int offset = 16; offset > 0; offset /= 2) {
    MaxLoc other = shuffle_xor(m, offset);
    if (other.value > m.value ||
        (other.value == m.value && other.index < m.index))
      m = other;
  }
  y[i] = x[i] - m.value;
  if (i == 0)
    where[0] = m.index;
}

__global__ void shift_by_max_kernel(const float *x, float *y, int *where) {
  shift_by_max(x, y, where);
}

__global__ void grad_shift_by_max(const float *x, float *dx, float *y,
                                  float *dy, int *where) {
  __enzyme_autodiff<void>((void *)shift_by_max, enzyme_dup, x, dx, enzyme_dup,
                          y, dy, enzyme_const, where);
}
