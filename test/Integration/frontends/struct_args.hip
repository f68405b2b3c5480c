// struct_args.cu for AMDGPU: structs go to device functions as first-class
// aggregates (`[4 x float]`), a larger one comes back through `sret`
// private memory (a plain pointer into it once the optimizer drops the
// attribute), and a struct of buffers is passed as its fields.
#include "hip_min.h"

struct HipIndex {
  int x;
};
#define threadIdx (HipIndex{(int)hipThreadIdx_x})
#define blockIdx (HipIndex{(int)hipBlockIdx_x})
#define blockDim (HipIndex{(int)hipBlockDim_x})

#include "struct_args.cu"
