// An optional buffer tested for null in the kernel (a bias a model may not
// have), in the style of a naive matmul forward: the launch passes null or
// a buffer, and the kernel's null test reads the presence flag Nabla adds
// after its own parameters.
__global__ void matmul_bias_forward(float *out, const float *inp,
                                    const float *weight, const float *bias,
                                    int rows, int cols, int outs) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  int o = blockIdx.y * blockDim.y + threadIdx.y;
  if (row < rows && o < outs) {
    float acc = (bias != NULL) ? bias[o] : 0.0f;
    const float *w = weight + o * cols;
    const float *x = inp + row * cols;
    for (int i = 0; i < cols; i++)
      acc += x[i] * w[i];
    out[row * outs + o] = acc;
  }
}

// Optional buffers tested in a device function, which the kernels and an
// Enzyme request call: each call passes whether its pointer is null.
#include "enzyme.h"

__device__ __noinline__ void affine_square(const float *x, const float *scale,
                                           const float *bias, float *y,
                                           int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i] * x[i];
    if (scale != nullptr)
      v *= scale[i];
    y[i] = bias ? v + bias[i] : v;
  }
}

__global__ void affine_square_kernel(const float *x, const float *scale,
                                     const float *bias, float *y, int n) {
  affine_square(x, scale, bias, y, n);
}

__global__ void grad_affine_square(const float *x, float *dx,
                                   const float *scale, float *dscale,
                                   const float *bias, float *dbias, float *y,
                                   float *dy, int n) {
  __enzyme_autodiff<void>((void *)affine_square, enzyme_dup, x, dx,
                          enzyme_dup, scale, dscale, enzyme_dup, bias, dbias,
                          enzyme_dup, y, dy, enzyme_const, n);
}

// A parameter the differentiated function never touches (an overload's
// ignored workspace, a mask a variant does not use): the request passes a
// buffer of any type for it, nothing of it reaches the gradient.
__device__ __noinline__ void gelu_inplace(float *x, const int *unused_mask,
                                          void *workspace, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i];
    x[i] = 0.5f * v * (1.0f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)));
  }
}

__global__ void grad_gelu_inplace(float *x, float *dx, const int *mask,
                                  void *workspace, int n) {
  __enzyme_autodiff<void>((void *)gelu_inplace, enzyme_dup, x, dx,
                          enzyme_const, mask, enzyme_const, workspace,
                          enzyme_const, n);
}
