// Module-scope device memory, as production CUDA declares it: an initialized
// `__constant__` lookup table, a `__device__` gain the kernels read, a table
// of more than 4096 elements (a generated constant table, the rest zeros)
// gathered from, cuda-samples' threadFenceReduction retirement counter
// (`__device__ unsigned int retirementCount = 0`) and a ticket counter that
// is never reset. On SPIR-V each becomes a buffer the runtime owns for as
// long as the module is loaded (nabla-bind-module-globals); NVVM and ROCDL
// keep them as globals.
#include "enzyme.h"

#define T4(k) 0.5f + 0.25f * (k), 0.5f + 0.25f * ((k) + 1), \
              0.5f + 0.25f * ((k) + 2), 0.5f + 0.25f * ((k) + 3)
#define T16(k) T4(k), T4((k) + 4), T4((k) + 8), T4((k) + 12)
#define T64(k) T16(k), T16((k) + 16), T16((k) + 32), T16((k) + 48)
#define T256(k) T64(k), T64((k) + 64), T64((k) + 128), T64((k) + 192)
#define T1024(k) T256(k), T256((k) + 256), T256((k) + 512), T256((k) + 768)

__constant__ float c_scale[128] = {T64(0), T64(64)};
__device__ float g_gain = 2.0f;
__device__ float g_big[5000] = {T1024(0), T1024(1024), T1024(2048),
                                T1024(3072), T64(4096)};
__device__ unsigned int retirementCount = 0;
__device__ unsigned int g_next = 0;

__device__ void scaled(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = g_gain * x[i] * x[i] * c_scale[i & 127];
}
__global__ void scaled_kernel(const float *x, float *y, int n) {
  scaled(x, y, n);
}
__global__ void grad_scaled(const float *x, float *dx, float *y, float *dy,
                            int n) {
  __enzyme_autodiff<void>((void *)scaled, enzyme_dup, x, dx, enzyme_dup, y,
                          dy, enzyme_const, n);
}

__device__ void gathered(const float *x, const int *index, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = sinf(x[i]) * g_big[index[i]];
}
__global__ void gathered_kernel(const float *x, const int *index, float *y,
                                int n) {
  gathered(x, index, y, n);
}
__global__ void grad_gathered(const float *x, float *dx, const int *index,
                              float *y, float *dy, int n) {
  __enzyme_autodiff<void>((void *)gathered, enzyme_dup, x, dx, enzyme_const,
                          index, enzyme_dup, y, dy, enzyme_const, n);
}

// threadFenceReduction's single-pass sum: every block publishes its partial
// sum, the last block to retire adds them and resets the counter.
__global__ void reduce_single_pass(const float *x, float *partial,
                                   float *total, int n) {
  __shared__ float tile[64];
  __shared__ bool amLast;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x] = i < n ? x[i] : 0.0f;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s)
      tile[threadIdx.x] += tile[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    partial[blockIdx.x] = tile[0];
    __threadfence();
    unsigned int ticket = atomicInc(&retirementCount, gridDim.x);
    amLast = ticket == gridDim.x - 1;
  }
  __syncthreads();
  if (amLast && threadIdx.x == 0) {
    float sum = 0.0f;
    for (int b = 0; b < gridDim.x; ++b)
      sum += partial[b];
    *total = sum;
    retirementCount = 0;
  }
}

// Tickets from a counter nobody resets: a launch starts where the module's
// previous launch stopped.
__global__ void take_tickets(unsigned int *tickets, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    tickets[i] = atomicAdd(&g_next, 1u);
}
