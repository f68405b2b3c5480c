// HIP: a __shared__ tile on a 2-D block, __syncthreads, and one atomicAdd per
// block: out[0] += sum over the block of exp(x[i]) * w[row].
#include "hip_min.h"
#include "enzyme.h"

__device__ void tilesum(const float *x, const float *w, float *out, int n) {
  __shared__ float tile[32];
  int t = hipThreadIdx_y * hipBlockDim_x + hipThreadIdx_x;
  int i = hipBlockIdx_x * 32 + t;
  tile[t] = i < n ? expf(x[i]) * w[hipThreadIdx_y] : 0.0f;
  __syncthreads();
  if (t == 0) {
    float s = 0.0f;
    for (int k = 0; k < 32; ++k)
      s += tile[k];
    atomicAdd(out, s);
  }
}

__global__ void tilesum_kernel(const float *x, const float *w, float *out,
                               int n) {
  tilesum(x, w, out, n);
}

__global__ void grad_tilesum(const float *x, float *dx, const float *w,
                             float *dw, float *out, float *dout, int n) {
  __enzyme_autodiff<void>((void *)tilesum, enzyme_dup, x, dx, enzyme_dup, w,
                          dw, enzyme_dup, out, dout, enzyme_const, n);
}
