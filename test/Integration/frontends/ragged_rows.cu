// Loops over ragged rows whose bounds are in memory (CSR-style offsets:
// variable-length sequences, graph neighbourhoods, sparse rows), updating the
// row in place: the adjoint tapes the overwritten values in global memory,
// and the tape's size is read from the offsets — by the kernel at its entry,
// under the condition its primal reads them under (`if (row < rows)`), and
// by the launcher from the launch's buffer before the launch.
#include "enzyme.h"

// Softmax of each row, in place.
__device__ void ragged_softmax(float *x, const int *offsets, int rows) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows)
    return;
  float *r = x + offsets[row];
  int n = offsets[row + 1] - offsets[row];
  float m = -1e30f;
  for (int j = 0; j < n; j++)
    m = fmaxf(m, r[j]);
  float s = 0.0f;
  for (int j = 0; j < n; j++) {
    r[j] = expf(r[j] - m);
    s += r[j];
  }
  for (int j = 0; j < n; j++)
    r[j] /= s;
}
__global__ void ragged_softmax_kernel(float *x, const int *offsets, int rows) {
  ragged_softmax(x, offsets, rows);
}
__global__ void grad_ragged_softmax(float *x, float *dx, const int *offsets,
                                    int rows) {
  __enzyme_autodiff<void>((void *)ragged_softmax, enzyme_dup, x, dx,
                          enzyme_const, offsets, enzyme_const, rows);
}

// A sparse row scaled in place by the norm of its values, the column indices
// and row pointers of a CSR matrix given (rowptr[row] .. rowptr[row + 1]).
__device__ void normalize_csr(float *values, const int *rowptr,
                              const int *cols, const float *weight, int rows) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < rows) {
    float norm = 0.0f;
    for (int k = rowptr[row]; k < rowptr[row + 1]; k++)
      norm += values[k] * values[k] * weight[cols[k]];
    float inv = rsqrtf(norm + 1e-3f);
    for (int k = rowptr[row]; k < rowptr[row + 1]; k++)
      values[k] = tanhf(values[k] * inv);
  }
}
__global__ void grad_normalize_csr(float *values, float *dvalues,
                                   const int *rowptr, const int *cols,
                                   const float *weight, float *dweight,
                                   int rows) {
  __enzyme_autodiff<void>((void *)normalize_csr, enzyme_dup, values, dvalues,
                          enzyme_const, rowptr, enzyme_const, cols, enzyme_dup,
                          weight, dweight, enzyme_const, rows);
}
