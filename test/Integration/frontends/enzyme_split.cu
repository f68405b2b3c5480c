// Enzyme's split mode from CUDA: __enzyme_augmentsize, __enzyme_augmentfwd
// and __enzyme_reverse with a caller-allocated tape, one region per thread
// of a byte buffer. Each thread sums the squares of its window of x (a
// fixed-length loop), scales the window in place by the sum, and writes the
// sum through a damped map to y.
#include "enzyme.h"

#define W 6

__device__ void window(float *x, float *y, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n)
    return;
  float s = 0.0f;
  for (int k = 0; k < W; ++k)
    s += x[t * W + k] * x[t * W + k];
  for (int k = 0; k < W; ++k)
    x[t * W + k] /= s;
  y[t] = s + 0.5f * sinf(s);
}

__global__ void window_tape_bytes(unsigned long *bytes) {
  bytes[0] = __enzyme_augmentsize((void *)window, enzyme_dup, enzyme_dup,
                                  enzyme_const);
}

__global__ void window_forward(float *x, float *dx, float *y, float *dy,
                               int n, char *tape, unsigned long bytes) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  __enzyme_augmentfwd((void *)window, enzyme_allocated, bytes, enzyme_tape,
                      tape + t * bytes, enzyme_dup, x, dx, enzyme_dup, y, dy,
                      enzyme_const, n);
}

__global__ void window_reverse(float *x, float *dx, float *y, float *dy,
                               int n, char *tape, unsigned long bytes) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  __enzyme_reverse((void *)window, enzyme_allocated, bytes, enzyme_tape,
                   tape + t * bytes, enzyme_dup, x, dx, enzyme_dup, y, dy,
                   enzyme_const, n);
}

__global__ void window_combined(float *x, float *dx, float *y, float *dy,
                                int n) {
  __enzyme_autodiff<void>((void *)window, enzyme_dup, x, dx, enzyme_dup, y,
                          dy, enzyme_const, n);
}
