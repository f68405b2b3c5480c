// An atomicAdd scatter: hist[bin[i]] += w[i] * w[i].
#include "enzyme.h"

__device__ void scatter(const float *w, const int *bin, float *hist, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    atomicAdd(&hist[bin[i]], w[i] * w[i]);
}

__global__ void scatter_kernel(const float *w, const int *bin, float *hist,
                               int n) {
  scatter(w, bin, hist, n);
}

__global__ void grad_scatter(const float *w, float *dw, const int *bin,
                             float *hist, float *dhist, int n) {
  __enzyme_autodiff<void>((void *)scatter, enzyme_dup, w, dw, enzyme_const,
                          bin, enzyme_dup, hist, dhist, enzyme_const, n);
}
