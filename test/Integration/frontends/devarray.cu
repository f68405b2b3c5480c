// A kernel taking device-array structs by value (as Julia's CuDeviceArray and
// many C++ frontends do): the parameter list is flattened into the fields.
#include "enzyme.h"

struct DeviceArray {
  float *data;
  long len;
};

__device__ void scale(DeviceArray a, DeviceArray b, float s) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < a.len)
    b.data[i] = s * a.data[i] * a.data[i];
}

__global__ void scale_kernel(DeviceArray a, DeviceArray b, float s) {
  scale(a, b, s);
}

__device__ void scale_ptrs(float *a, float *b, long n, float s) {
  DeviceArray x = {a, n}, y = {b, n};
  scale(x, y, s);
}

__global__ void grad_scale(DeviceArray a, DeviceArray da, DeviceArray b,
                           DeviceArray db, float s) {
  __enzyme_autodiff<void>((void *)scale_ptrs, enzyme_dup, a.data, da.data,
                          enzyme_dup, b.data, db.data, enzyme_const, a.len,
                          enzyme_const, s);
}
