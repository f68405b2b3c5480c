// The HIP runtime definitions these kernels need, for `clang -x hip
// -nogpuinc` on a machine without ROCm: the attributes and the clang
// builtins the HIP headers define threadIdx, blockIdx, blockDim,
// __syncthreads, sinf, sincosf and atomicAdd with.
#pragma once
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))

#define hipThreadIdx_x __builtin_amdgcn_workitem_id_x()
#define hipThreadIdx_y __builtin_amdgcn_workitem_id_y()
#define hipBlockIdx_x __builtin_amdgcn_workgroup_id_x()
#define hipBlockIdx_y __builtin_amdgcn_workgroup_id_y()
#define hipBlockDim_x __builtin_amdgcn_workgroup_size_x()
#define hipBlockDim_y __builtin_amdgcn_workgroup_size_y()
#define hipGridDim_x __builtin_amdgcn_grid_size_x()

__device__ inline void __syncthreads() {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}

extern "C" __device__ float __ocml_sin_f32(float);
extern "C" __device__ float __ocml_exp_f32(float);
__device__ inline float sinf(float x) { return __ocml_sin_f32(x); }
__device__ inline float expf(float x) { return __ocml_exp_f32(x); }

// As the HIP headers define it: OCML returns the sine and stores the cosine
// through a private-memory pointer.
extern "C" __device__ float
__ocml_sincos_f32(float, __attribute__((address_space(5))) float *);
__device__ inline void sincosf(float x, float *s, float *c) {
  float cosine;
  *s = __ocml_sincos_f32(
      x, (__attribute__((address_space(5))) float *)&cosine);
  *c = cosine;
}

__device__ inline float atomicAdd(float *p, float v) {
  return __hip_atomic_fetch_add(p, v, __ATOMIC_RELAXED,
                                __HIP_MEMORY_SCOPE_AGENT);
}
