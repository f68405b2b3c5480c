// Mixed-precision training kernels in the idioms of LLM training code:
// activations kept in bf16 (`floatX`), math in f32, a half (f16) variant,
// and Enzyme gradient requests through them. cuda_bf16/cuda_fp16 convert in
// inline assembly (cvt.rn.bf16.f32, mov.b32 {0,h}, cvt.f32.f16,
// cvt.rn.f16.f32) and keep each value as its 16 bits.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "enzyme.h"

typedef __nv_bfloat16 floatX;

#define GELU_SCALING_FACTOR 0.7978845608f

// out = gelu(inp), elementwise, bf16 in and out.
__device__ void gelu_forward(floatX *out, const floatX *inp, int N) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) {
    float xi = (float)inp[i];
    float cube = 0.044715f * xi * xi * xi;
    out[i] = (floatX)(0.5f * xi *
                      (1.0f + tanhf(GELU_SCALING_FACTOR * (xi + cube))));
  }
}

__global__ void gelu_forward_kernel(floatX *out, const floatX *inp, int N) {
  gelu_forward(out, inp, N);
}

__global__ void grad_gelu_forward(floatX *out, floatX *dout, const floatX *inp,
                                  floatX *dinp, int N) {
  __enzyme_autodiff<void>((void *)gelu_forward, enzyme_dupnoneed, out, dout,
                          enzyme_dup, inp, dinp, enzyme_const, N);
}

// Residual connection: out = inp1 + inp2 in bf16.
__device__ void residual_forward(floatX *out, const floatX *inp1,
                                 const floatX *inp2, int N) {
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx < N)
    out[idx] = __float2bfloat16((float)inp1[idx] + (float)inp2[idx]);
}

__global__ void residual_forward_kernel(floatX *out, const floatX *inp1,
                                        const floatX *inp2, int N) {
  residual_forward(out, inp1, inp2, N);
}

__global__ void grad_residual_forward(floatX *out, floatX *dout,
                                      const floatX *inp1, floatX *dinp1,
                                      const floatX *inp2, floatX *dinp2,
                                      int N) {
  __enzyme_autodiff<void>((void *)residual_forward, enzyme_dupnoneed, out,
                          dout, enzyme_dup, inp1, dinp1, enzyme_dup, inp2,
                          dinp2, enzyme_const, N);
}

// Packed access, as LLM training code moves activations: eight bf16 in one
// 16-byte int4 (a cache-streaming load), split into a local array, and
// joined back for one 16-byte store.
struct alignas(16) Packed8 {
  floatX payload[8];
};

__device__ Packed8 load8(const floatX *address) {
  int4 bits = __ldcs(reinterpret_cast<const int4 *>(address));
  Packed8 result;
  memcpy(&result, &bits, sizeof(bits));
  return result;
}

__device__ void store8(floatX *address, Packed8 value) {
  int4 bits;
  memcpy(&bits, &value, sizeof(bits));
  *reinterpret_cast<int4 *>(address) = bits;
}

// out[i] = inp[i]^2 / 2, eight elements per thread.
__device__ void half_square_packed(floatX *out, const floatX *inp, int N) {
  int i = (blockIdx.x * blockDim.x + threadIdx.x) * 8;
  if (i < N) {
    Packed8 x = load8(inp + i), y;
    for (int k = 0; k < 8; ++k) {
      float v = (float)x.payload[k];
      y.payload[k] = (floatX)(0.5f * v * v);
    }
    store8(out + i, y);
  }
}

__global__ void half_square_packed_kernel(floatX *out, const floatX *inp,
                                          int N) {
  half_square_packed(out, inp, N);
}

__global__ void grad_half_square_packed(floatX *out, floatX *dout,
                                        const floatX *inp, floatX *dinp,
                                        int N) {
  __enzyme_autodiff<void>((void *)half_square_packed, enzyme_dupnoneed, out,
                          dout, enzyme_dup, inp, dinp, enzyme_const, N);
}

// A half (f16) variant: y = half(x * w) with the weight in f32.
__device__ void scale_half(__half *y, const __half *x, const float *w, int N) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N)
    y[i] = __float2half(__half2float(x[i]) * w[i % 4]);
}

__global__ void scale_half_kernel(__half *y, const __half *x, const float *w,
                                  int N) {
  scale_half(y, x, w, N);
}

__global__ void grad_scale_half(__half *y, __half *dy, const __half *x,
                                __half *dx, const float *w, float *dw, int N) {
  __enzyme_autodiff<void>((void *)scale_half, enzyme_dupnoneed, y, dy,
                          enzyme_dup, x, dx, enzyme_dup, w, dw, enzyme_const,
                          N);
}

// Arithmetic in the half types themselves: cuda_bf16's operators and
// __hfma are PTX assembly (`fma.rn.bf16` with a constant operand on sm_80,
// `mul.bf16` on sm_90), half2's `mul.f16x2`/`add.f16x2`. A per-channel
// affine map in bf16 whose weights every row shares (their adjoint needs
// bf16 atomics), and a half2 polynomial.
__device__ void half_affine(floatX *y, const floatX *x, const floatX *w,
                            const floatX *b, int N) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N)
    y[i] = __hfma(x[i], w[i % 4], b[i % 4]) - x[i] * x[i];
}

__global__ void half_affine_kernel(floatX *y, const floatX *x, const floatX *w,
                                   const floatX *b, int N) {
  half_affine(y, x, w, b, N);
}

__global__ void grad_half_affine(floatX *y, floatX *dy, const floatX *x,
                                 floatX *dx, const floatX *w, floatX *dw,
                                 const floatX *b, floatX *db, int N) {
  __enzyme_autodiff<void>((void *)half_affine, enzyme_dupnoneed, y, dy,
                          enzyme_dup, x, dx, enzyme_dup, w, dw, enzyme_dup, b,
                          db, enzyme_const, N);
}

__device__ void half2_poly(__half2 *y, const __half2 *x, int N) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) {
    __half2 v = x[i];
    y[i] = v * v + v;
  }
}

__global__ void half2_poly_kernel(__half2 *y, const __half2 *x, int N) {
  half2_poly(y, x, N);
}

__global__ void grad_half2_poly(__half2 *y, __half2 *dy, const __half2 *x,
                                __half2 *dx, int N) {
  __enzyme_autodiff<void>((void *)half2_poly, enzyme_dupnoneed, y, dy,
                          enzyme_dup, x, dx, enzyme_const, N);
}

// llm.c's atomicAddX: a bf16 atomic add written as an add of a bf16 pair
// to the aligned 32-bit word holding the element, the other half zero
// (the address aligned down through its integer; cuda_bf16's pair
// atomicAdd is a compare-exchange loop of `fma.rn.bf16x2`). An encoder's
// backward scatter: rows of dout added into the rows of dwte the tokens
// select, several tokens sharing a row.
__device__ void atomicAddX(__nv_bfloat16 *addr, __nv_bfloat16 val) {
  uintptr_t ptr_val = reinterpret_cast<uintptr_t>(addr);
  __nv_bfloat162 *ptr_bf16 =
      reinterpret_cast<__nv_bfloat162 *>(ptr_val & ~uintptr_t(0x3));
  __nv_bfloat162 add_val =
      (ptr_val & 0x3) ? __halves2bfloat162(__ushort_as_bfloat16(0), val)
                      : __halves2bfloat162(val, __ushort_as_bfloat16(0));
  atomicAdd(ptr_bf16, add_val);
}

__device__ void token_scatter(floatX *dwte, const floatX *dout,
                              const int *tokens, int N, int C) {
  int row = blockIdx.x, c = threadIdx.x;
  if (row < N && c < C)
    atomicAddX(dwte + tokens[row] * C + c, (floatX)(2.0f * (float)dout[row * C + c]));
}

__global__ void token_scatter_kernel(floatX *dwte, const floatX *dout,
                                     const int *tokens, int N, int C) {
  token_scatter(dwte, dout, tokens, N, C);
}

__global__ void grad_token_scatter(floatX *dwte, floatX *ddwte,
                                   const floatX *dout, floatX *ddout,
                                   const int *tokens, int N, int C) {
  __enzyme_autodiff<void>((void *)token_scatter, enzyme_dup, dwte, ddwte,
                          enzyme_dup, dout, ddout, enzyme_const, tokens,
                          enzyme_const, N, enzyme_const, C);
}

// llm.c's layernorm backward writes its bf16 column sums with an explicit
// compare-exchange loop on bf16 pairs, the first attempt before the loop
// (`while (old != current)`): each thread sums two columns over its
// block's rows in f32 and adds the pair into dbias.
__device__ void column_sums(floatX *dbias, const floatX *dout, int N, int C) {
  __nv_bfloat162 *pairs = reinterpret_cast<__nv_bfloat162 *>(dbias);
  for (int i = threadIdx.x; i < C / 2; i += blockDim.x) {
    float a = 0.0f, b = 0.0f;
    for (int r = blockIdx.x; r < N; r += gridDim.x) {
      a += (float)dout[r * C + 2 * i];
      b += (float)dout[r * C + 2 * i + 1];
    }
    __nv_bfloat162 add = __halves2bfloat162((floatX)a, (floatX)b);
    __nv_bfloat162 current = pairs[i];
    __nv_bfloat162 updated = add + current;
    unsigned int current32 = *reinterpret_cast<unsigned int *>(&current);
    unsigned int updated32 = *reinterpret_cast<unsigned int *>(&updated);
    unsigned int old32 =
        atomicCAS((unsigned int *)&pairs[i], current32, updated32);
    while (old32 != current32) {
      current32 = old32;
      updated = *reinterpret_cast<__nv_bfloat162 *>(&current32) + add;
      updated32 = *reinterpret_cast<unsigned int *>(&updated);
      old32 = atomicCAS((unsigned int *)&pairs[i], current32, updated32);
    }
  }
}

__global__ void column_sums_kernel(floatX *dbias, const floatX *dout, int N,
                                   int C) {
  column_sums(dbias, dout, N, C);
}

__global__ void grad_column_sums(floatX *dbias, floatX *ddbias,
                                 const floatX *dout, floatX *ddout, int N,
                                 int C) {
  __enzyme_autodiff<void>((void *)column_sums, enzyme_dup, dbias, ddbias,
                          enzyme_dup, dout, ddout, enzyme_const, N,
                          enzyme_const, C);
}
