// Production CUDA's memory idioms: cache-streaming loads of float4-packed
// rows (__ldcs, __ldcg: PTX inline assembly in CUDA's headers), streaming
// stores written as inline assembly the way CUDA's __stcs is, cooperative
// groups' warp reduction (whose thread_block reads a reserved shared-memory
// offset in assembly on sm_80 and later), and fmodf.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

#include "enzyme.h"

namespace cg = cooperative_groups;

__device__ __forceinline__ void store_streaming(float *p, float v) {
  asm volatile("st.global.cs.f32 [%0], %1;" ::"l"(p), "f"(v) : "memory");
}

// GELU (tanh form) of n4 float4s, read with __ldcs, written with st.global.cs.
__device__ void gelu4(const float *x, float *y, int n4) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n4) {
    float4 v = __ldcs(reinterpret_cast<const float4 *>(x) + i);
    float in[4] = {v.x, v.y, v.z, v.w};
    for (int k = 0; k < 4; k++) {
      float u = in[k];
      float inner = 0.7978845608f * (u + 0.044715f * u * u * u);
      store_streaming(y + 4 * i + k, 0.5f * u * (1.0f + tanhf(inner)));
    }
  }
}

__global__ void gelu4_kernel(const float *x, float *y, int n4) {
  gelu4(x, y, n4);
}

__global__ void grad_gelu4(const float *x, float *dx, float *y, float *dy,
                           int n4) {
  __enzyme_autodiff<void>((void *)gelu4, enzyme_dup, x, dx, enzyme_dupnoneed,
                          y, dy, enzyme_const, n4);
}

// sums[w] = sum over warp w of fmodf(x, 1.5) * x[i], read with __ldcg.
__device__ void warp_sums(const float *x, float *sums) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  int i = blockIdx.x * blockDim.x + block.thread_rank();
  float v = __ldcg(x + i);
  float s = cg::reduce(warp, fmodf(v, 1.5f) * v, cg::plus<float>());
  if (warp.thread_rank() == 0)
    sums[i / 32] = s;
}

__global__ void warp_sums_kernel(const float *x, float *sums) {
  warp_sums(x, sums);
}

__global__ void grad_warp_sums(const float *x, float *dx, float *sums,
                               float *dsums) {
  __enzyme_autodiff<void>((void *)warp_sums, enzyme_dup, x, dx, enzyme_dup,
                          sums, dsums);
}
