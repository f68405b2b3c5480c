// Float atomics CUDA lacks, written as compare-exchange loops over the
// value's bits: atomicMax on floats (a block's maximum in shared memory, as
// pre-cooperative-groups softmax kernels take a row's max) and the CUDA
// programming guide's atomicAdd on doubles. Nabla recognises each loop as
// the atomic it implements, so they run and differentiate. The loop is
// also written `while (old != assumed)`, its first attempt before it.
#include "enzyme.h"

__device__ float atomicMaxFloat(float *address, float val) {
  int *addr = (int *)address;
  int old = *addr, assumed;
  do {
    assumed = old;
    old = atomicCAS(addr, assumed,
                    __float_as_int(fmaxf(val, __int_as_float(assumed))));
  } while (assumed != old);
  return __int_as_float(old);
}

__device__ double atomicAddDouble(double *address, double val) {
  unsigned long long *a = (unsigned long long *)address;
  unsigned long long old = *a, assumed;
  do {
    assumed = old;
    old = atomicCAS(a, assumed,
                    __double_as_longlong(val + __longlong_as_double(assumed)));
  } while (assumed != old);
  return __longlong_as_double(old);
}

__device__ float atomicMinFloat(float *address, float val) {
  int *addr = (int *)address;
  int assumed = *addr;
  int old = atomicCAS(addr, assumed,
                      __float_as_int(fminf(val, __int_as_float(assumed))));
  while (old != assumed) {
    assumed = old;
    old = atomicCAS(addr, assumed,
                    __float_as_int(fminf(val, __int_as_float(assumed))));
  }
  return __int_as_float(old);
}

// y[i] = x[i] - min over x[i]'s block.
__device__ void shift_by_block_min(const float *x, float *y, int n) {
  __shared__ float m;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (threadIdx.x == 0)
    m = INFINITY;
  __syncthreads();
  if (i < n)
    atomicMinFloat(&m, x[i]);
  __syncthreads();
  if (i < n)
    y[i] = x[i] - m;
}

// y[i] = x[i] - max over x[i]'s block.
__device__ void shift_by_block_max(const float *x, float *y, int n) {
  __shared__ float m;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (threadIdx.x == 0)
    m = -INFINITY;
  __syncthreads();
  if (i < n)
    atomicMaxFloat(&m, x[i]);
  __syncthreads();
  if (i < n)
    y[i] = x[i] - m;
}

// s[0] += sum of x^2, in double.
__device__ void sum_squares(const double *x, double *s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    atomicAddDouble(s, x[i] * x[i]);
}

__global__ void shift_kernel(const float *x, float *y, int n) {
  shift_by_block_max(x, y, n);
}
__global__ void grad_shift(const float *x, float *dx, float *y, float *dy,
                           int n) {
  __enzyme_autodiff<void>((void *)shift_by_block_max, enzyme_dup, x, dx,
                          enzyme_dup, y, dy, enzyme_const, n);
}
__global__ void sum_squares_kernel(const double *x, double *s, int n) {
  sum_squares(x, s, n);
}
__global__ void grad_sum_squares(const double *x, double *dx, double *s,
                                 double *ds, int n) {
  __enzyme_autodiff<void>((void *)sum_squares, enzyme_dup, x, dx, enzyme_dup,
                          s, ds, enzyme_const, n);
}
__global__ void shift_min_kernel(const float *x, float *y, int n) {
  shift_by_block_min(x, y, n);
}
__global__ void grad_shift_min(const float *x, float *dx, float *y, float *dy,
                               int n) {
  __enzyme_autodiff<void>((void *)shift_by_block_min, enzyme_dup, x, dx,
                          enzyme_dup, y, dy, enzyme_const, n);
}
