// The block reduction of CUDA's samples and tutorials, in its common forms:
// a shared-memory tree whose first stride is half the block's size
// (`for (s = blockDim.x / 2; s > 0; s >>= 1)`, a run-time loop clang makes a
// do-while), in `extern __shared__` dynamic shared memory or a static
// `__shared__` array, the root stored by thread 0. Reverse mode gives every
// element on a path to the root the root's adjoint, a broadcast
// (ReductionTree.cpp); a block size that is not a power of two leaves
// elements off the root's paths, as the primal does.
#include "enzyme.h"

__device__ void reduce_dynamic(const float *x, float *out, int n) {
  extern __shared__ float sdata[];
  unsigned int tid = threadIdx.x;
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  sdata[tid] = (i < n) ? x[i] : 0.0f;
  __syncthreads();
  for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s)
      sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0)
    out[blockIdx.x] = sdata[0];
}

// out[b] = (block sum of x^2)^2: the adjoint needs the root's value.
__device__ void reduce_static(const float *x, float *out, int n) {
  __shared__ float sdata[256];
  unsigned int tid = threadIdx.x;
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = (i < n) ? x[i] : 0.0f;
  sdata[tid] = v * v;
  __syncthreads();
  for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s)
      sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0)
    out[blockIdx.x] = sdata[0] * sdata[0];
}

// llm.c's form: the block size a parameter, the barrier first in each step.
__device__ void mean_rows(float *mean, const float *x, int C, int block_size) {
  extern __shared__ float shared[];
  int idx = blockIdx.x, tid = threadIdx.x;
  const float *row = x + idx * C;
  float sum = 0.0f;
  for (int i = tid; i < C; i += block_size)
    sum += row[i];
  shared[tid] = sum;
  __syncthreads();
  for (int stride = block_size / 2; stride >= 1; stride /= 2) {
    __syncthreads();
    if (tid < stride)
      shared[tid] += shared[tid + stride];
  }
  if (tid == 0)
    mean[idx] = shared[0] / C;
}

__global__ void mean_rows_kernel(float *mean, const float *x, int C,
                                 int block_size) {
  mean_rows(mean, x, C, block_size);
}
__global__ void grad_mean_rows(float *mean, float *dmean, const float *x,
                               float *dx, int C, int block_size) {
  __enzyme_autodiff<void>((void *)mean_rows, enzyme_dupnoneed, mean, dmean,
                          enzyme_dup, x, dx, enzyme_const, C, enzyme_const,
                          block_size);
}

__global__ void reduce_dynamic_kernel(const float *x, float *out, int n) {
  reduce_dynamic(x, out, n);
}
__global__ void reduce_static_kernel(const float *x, float *out, int n) {
  reduce_static(x, out, n);
}
__global__ void grad_reduce_dynamic(const float *x, float *dx, float *out,
                                    float *dout, int n) {
  __enzyme_autodiff<void>((void *)reduce_dynamic, enzyme_dup, x, dx,
                          enzyme_dupnoneed, out, dout, enzyme_const, n);
}
__global__ void grad_reduce_static(const float *x, float *dx, float *out,
                                   float *dout, int n) {
  __enzyme_autodiff<void>((void *)reduce_static, enzyme_dup, x, dx, enzyme_dup,
                          out, dout, enzyme_const, n);
}
