// Local arrays and structs as production kernels use them: a zero-initialised
// accumulator array (`float acc[8] = {}`: llvm.memset) and structs copied
// whole (llvm.memcpy), in a kernel and under a gradient request.
#include "enzyme.h"

__device__ void weighted(const float *x, float *y, int m) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float acc[8] = {};
  for (int k = 0; k < m && k < 8; k++)
    acc[k] = x[8 * i + k] * x[8 * i + k];
  float s = 0.0f;
  for (int k = 0; k < 8; k++)
    s += acc[k] * (k + 1);
  y[i] = s;
}

__global__ void weighted_kernel(const float *x, float *y, int m) {
  weighted(x, y, m);
}

__global__ void grad_weighted(const float *x, float *dx, float *y, float *dy,
                              int m) {
  __enzyme_autodiff<void>((void *)weighted, enzyme_dup, x, dx, enzyme_dup, y,
                          dy, enzyme_const, m);
}

struct Sample {
  float value, weight, pad[6];
};

__device__ Sample make_sample(const float *x, int i) {
  Sample s = {};
  s.value = x[i];
  s.weight = 2.0f * x[i];
  return s;
}

__global__ void copy_samples(const float *x, Sample *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  Sample local[2];
  local[0] = make_sample(x, i);
  local[1] = local[0];
  out[i] = local[i & 1];
}

// A zero-initialised array at the top of a loop body: the memset loop is the
// first construct of the outer loop's header block (invalid SPIR-V before:
// an OpPhi naming the header the serializer split, llm.c's attention
// backward).
__global__ void row_sums(const float *x, float *y, int rows, int m) {
  for (int r = 0; r < rows; r++) {
    float acc[4] = {};
    for (int k = 0; k < m && k < 4; k++)
      acc[k] = x[(r * blockDim.x + threadIdx.x) * 4 + k];
    y[r * blockDim.x + threadIdx.x] = acc[0] + 2 * acc[1] + 3 * acc[2] + 4 * acc[3];
  }
}
