// Structs by value into and out of device functions: a complex product
// (`c_mul(complex, complex)` returning a complex) and a parameter set with a
// pointer field, each in a noinline device function, called by a kernel and
// by a function an Enzyme request differentiates.
#include "enzyme.h"

struct complex {
  float re, im;
};

struct Params {
  float scale;
  int period;
  const float *table;
};

__device__ __noinline__ complex c_mul(complex a, complex b) {
  return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}

__device__ __noinline__ float apply(Params p, float x, int i) {
  return p.scale * x + p.table[i % p.period];
}

// y[i] = scale * (re + im of z[i]^2) + table[i % period], z[i] = x[2i] + i x[2i+1]
__device__ void square_and_apply(const float *x, float *y, Params p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    complex z{x[2 * i], x[2 * i + 1]};
    complex s = c_mul(z, z);
    y[i] = apply(p, s.re + s.im, i);
  }
}

__global__ void square_and_apply_kernel(const float *x, float *y, Params p,
                                        int n) {
  square_and_apply(x, y, p, n);
}

// The parameter set built in the function an Enzyme request
// differentiates (a request takes scalars and pointers).
__device__ void square_and_apply_flat(const float *x, float *y, float scale,
                                      int period, const float *table, int n) {
  Params p{scale, period, table};
  square_and_apply(x, y, p, n);
}

__global__ void grad_square_and_apply(const float *x, float *dx, float *y,
                                      float *dy, float scale, int period,
                                      const float *table, int n) {
  __enzyme_autodiff<void>((void *)square_and_apply_flat, enzyme_dup, x, dx,
                          enzyme_dup, y, dy, enzyme_const, scale,
                          enzyme_const, period, enzyme_const, table,
                          enzyme_const, n);
}

// The parameter set passed by value to the function the request
// differentiates, marked enzyme_const.
__global__ void grad_square_and_apply_params(const float *x, float *dx,
                                             float *y, float *dy, Params p,
                                             int n) {
  __enzyme_autodiff<void>((void *)square_and_apply, enzyme_dup, x, dx,
                          enzyme_dup, y, dy, enzyme_const, p, enzyme_const,
                          n);
}

// A struct with an array field, mutated in the callee's own copy and
// returned; a multi-block callee returning a larger struct; a struct of
// buffers.
struct Vec4 {
  float v[4];
};

struct Stats {
  float sum[4];
  int count;
};

struct Buffers {
  const float *in;
  float *out;
  int n;
};

__device__ __noinline__ Vec4 scaled(Vec4 a, float k) {
  for (int j = 0; j < 4; ++j)
    a.v[j] *= k * (j + 1);
  return a;
}

__device__ __noinline__ float dot(Vec4 a, Vec4 b) {
  float s = 0;
  for (int j = 0; j < 4; ++j)
    s += a.v[j] * b.v[j];
  return s;
}

__device__ __noinline__ Stats powers(float x, int count) {
  Stats s;
  float p = x;
  for (int j = 0; j < 4; ++j) {
    s.sum[j] = j < count ? p : 0.0f;
    p *= x;
  }
  s.count = count;
  return s;
}

// y[i] = <v, scaled(v, k)> + sum of the first `count` powers of v[0].
__device__ void vec4_norm(const float *x, float *y, float k, int count, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    Vec4 v{{x[4 * i], x[4 * i + 1], x[4 * i + 2], x[4 * i + 3]}};
    Vec4 s = scaled(v, k);
    Stats p = powers(v.v[0], count);
    float total = 0;
    for (int j = 0; j < p.count; ++j)
      total += p.sum[j];
    y[i] = dot(v, s) + total;
  }
}

__global__ void vec4_kernel(const float *x, float *y, float k, int count,
                            int n) {
  vec4_norm(x, y, k, count, n);
}

__global__ void grad_vec4(const float *x, float *dx, float *y, float *dy,
                          float k, int count, int n) {
  __enzyme_autodiff<void>((void *)vec4_norm, enzyme_dup, x, dx, enzyme_dup, y,
                          dy, enzyme_const, k, enzyme_const, count,
                          enzyme_const, n);
}

__device__ __noinline__ void twice(Buffers b) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < b.n)
    b.out[i] = 2.0f * b.in[i] * b.in[i];
}

__global__ void buffers_kernel(const float *x, float *y, int n) {
  twice(Buffers{x, y, n});
}

// A Julia-style device array ({pointer, length}, as GPUCompiler passes a
// CuDeviceArray) and a struct of buffers passed by value to the function a
// request differentiates, marked enzyme_dup and enzyme_dupnoneed: the
// shadow structs hold the shadow buffers (Enzyme's Duplicated).
struct DeviceArray {
  float *ptr;
  long len;
};

// y[i] = k x[i] x[i % m] + x[i] * out[i] (the Buffers' out read before
// it is written), i < y.len, m = x.len.
__device__ void gather_scale(DeviceArray x, DeviceArray y, Buffers b,
                             float k) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < y.len) {
    float xi = x.ptr[i];
    y.ptr[i] = k * xi * x.ptr[i % x.len];
    if (i < b.n)
      b.out[i] = b.out[i] * b.in[i] * xi;
  }
}

__global__ void gather_scale_kernel(float *x, long m, float *y, long n,
                                    const float *in, float *out, int nb,
                                    float k) {
  gather_scale(DeviceArray{x, m}, DeviceArray{y, n}, Buffers{in, out, nb}, k);
}

__global__ void grad_gather_scale(float *x, float *dx, long m, float *y,
                                  float *dy, long n, const float *in,
                                  float *din, float *out, float *dout, int nb,
                                  float k) {
  DeviceArray a{x, m}, da{dx, m}, b{y, n}, db{dy, n};
  Buffers c{in, out, nb}, dc{din, dout, nb};
  __enzyme_autodiff<void>((void *)gather_scale, enzyme_dup, a, da,
                          enzyme_dupnoneed, b, db, enzyme_dup, c, dc,
                          enzyme_const, k);
}
