// Loops that update memory in place with sums and differences only, as
// cuda-samples' scalarProd (per-vector accumulators reduced by a tree whose
// levels are block-stride loops, inside a grid-stride loop over vectors)
// and fastWalshTransform (butterflies in shared memory, a run-time number
// of stages) write them. Recomputing an iteration reads memory that was
// overwritten since, but nothing needs those values: the adjoint of
// `a[i] += a[j]` reads shadows only.
#include "enzyme.h"

#define ACCUM_N 64

__device__ void scalar_prod(float *C, const float *A, const float *B,
                            int vectorN, int elementN) {
  __shared__ float acc[ACCUM_N];
  for (int vec = blockIdx.x; vec < vectorN; vec += gridDim.x) {
    int base = elementN * vec, end = base + elementN;
    for (int i = threadIdx.x; i < ACCUM_N; i += blockDim.x) {
      float sum = 0;
      for (int pos = base + i; pos < end; pos += ACCUM_N)
        sum += A[pos] * B[pos];
      acc[i] = sum;
    }
    for (int stride = ACCUM_N / 2; stride > 0; stride >>= 1) {
      __syncthreads();
      for (int i = threadIdx.x; i < stride; i += blockDim.x)
        acc[i] += acc[stride + i];
    }
    __syncthreads();
    if (threadIdx.x == 0)
      C[vec] = acc[0];
  }
}

__global__ void scalar_prod_kernel(float *C, const float *A, const float *B,
                                   int vectorN, int elementN) {
  scalar_prod(C, A, B, vectorN, elementN);
}

__global__ void grad_scalar_prod(float *C, float *dC, const float *A,
                                 float *dA, const float *B, float *dB,
                                 int vectorN, int elementN) {
  __enzyme_autodiff<void>((void *)scalar_prod, enzyme_dup, C, dC, enzyme_dup,
                          A, dA, enzyme_dup, B, dB, enzyme_const, vectorN,
                          enzyme_const, elementN);
}

// A Walsh-Hadamard transform of each block's row of 2^log2N values, radix 2,
// in shared memory.
__device__ void walsh(float *d, int log2N) {
  __shared__ float s[256];
  int N = 1 << log2N;
  float *row = d + blockIdx.x * N;
  for (int pos = threadIdx.x; pos < N; pos += blockDim.x)
    s[pos] = row[pos];
  for (int stride = N >> 1; stride > 0; stride >>= 1) {
    __syncthreads();
    for (int pos = threadIdx.x; pos < N / 2; pos += blockDim.x) {
      int lo = pos & (stride - 1);
      int i0 = ((pos - lo) << 1) + lo, i1 = i0 + stride;
      float a = s[i0], b = s[i1];
      s[i0] = a + b;
      s[i1] = a - b;
    }
  }
  __syncthreads();
  for (int pos = threadIdx.x; pos < N; pos += blockDim.x)
    row[pos] = s[pos];
}

__global__ void walsh_kernel(float *d, int log2N) { walsh(d, log2N); }

__global__ void grad_walsh(float *d, float *dd, int log2N) {
  __enzyme_autodiff<void>((void *)walsh, enzyme_dup, d, dd, enzyme_const,
                          log2N);
}
