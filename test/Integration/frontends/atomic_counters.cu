// Counters that wrap (atomicInc/atomicDec: atomicrmw uinc_wrap/udec_wrap),
// and the stream compaction idiom: each kept element takes a slot from an
// atomicInc counter and writes there; its gradient reads the slot the
// forward sweep took.
#include "enzyme.h"

__global__ void tickets(unsigned *counters, unsigned *inc, unsigned *dec,
                        unsigned bound) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  inc[i] = atomicInc(&counters[0], bound);
  dec[i] = atomicDec(&counters[1], bound);
}

__device__ void compact(const float *x, float *out, unsigned *count, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && x[i] > 0.0f) {
    unsigned slot = atomicInc(count, 0xffffffffu);
    out[slot] = x[i] * x[i];
  }
}

__global__ void compact_kernel(const float *x, float *out, unsigned *count,
                               int n) {
  compact(x, out, count, n);
}

__global__ void grad_compact(const float *x, float *dx, float *out,
                             float *dout, unsigned *count, int n) {
  __enzyme_autodiff<void>((void *)compact, enzyme_dup, x, dx, enzyme_dup, out,
                          dout, enzyme_const, count, enzyme_const, n);
}
