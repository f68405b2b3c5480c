// A gradient through an object also accessed as bytes: the float read from
// its bytes cannot carry a derivative, so the request is a located error,
// never a zero gradient.
#include "enzyme.h"

__device__ void square_marked(float *data) {
  unsigned char *bytes = reinterpret_cast<unsigned char *>(data);
  bytes[4 * threadIdx.x + 3] &= 0x7f;
  data[threadIdx.x] = data[threadIdx.x] * data[threadIdx.x];
}

__global__ void grad_square_marked(float *data, float *ddata) {
  __enzyme_autodiff<void>((void *)square_marked, enzyme_dup, data, ddata);
}
