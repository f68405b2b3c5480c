// A 2-D 5-point stencil on a 2-D launch (row-major W x H grid).
#include "enzyme.h"

__device__ void stencil(const float *in, float *out, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 1 || y < 1 || x >= w - 1 || y >= h - 1)
    return;
  int c = y * w + x;
  out[c] = 0.5f * in[c] +
           0.125f * (in[c - 1] + in[c + 1] + in[c - w] * in[c + w]);
}

__global__ void stencil_kernel(const float *in, float *out, int w, int h) {
  stencil(in, out, w, h);
}

__global__ void grad_stencil(const float *in, float *din, float *out,
                             float *dout, int w, int h) {
  __enzyme_autodiff<void>((void *)stencil, enzyme_dup, in, din, enzyme_dup,
                          out, dout, enzyme_const, w, enzyme_const, h);
}
