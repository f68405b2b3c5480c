// Batched small dense linear algebra, one system per thread with a run-time
// size n (Kalman filters, per-pixel least squares): triangular loop nests
// whose bounds depend on the enclosing loop's counter and that overwrite
// what they read. The adjoint tapes them in global memory, each enclosing
// iteration given the slots of the inner loop's largest trip count.
#include "enzyme.h"

// L y = b for a lower-triangular L, y written over b.
__device__ void trsv_lower(const float *L, float *b, int n, int batch) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= batch)
    return;
  const float *l = L + (size_t)t * n * n;
  float *x = b + (size_t)t * n;
  for (int i = 0; i < n; i++) {
    float s = x[i];
    for (int j = 0; j < i; j++)
      s -= l[i * n + j] * x[j];
    x[i] = s / l[i * n + i];
  }
}
__global__ void trsv_lower_kernel(const float *L, float *b, int n, int batch) {
  trsv_lower(L, b, n, batch);
}
__global__ void grad_trsv_lower(const float *L, float *dL, float *b, float *db,
                                int n, int batch) {
  __enzyme_autodiff<void>((void *)trsv_lower, enzyme_dup, L, dL, enzyme_dup, b,
                          db, enzyme_const, n, enzyme_const, batch);
}

// The Cholesky factor of a symmetric positive definite matrix, in place
// (lower triangle; the upper one is left as it was): a three-deep nest.
__device__ void cholesky(float *A, int n, int batch) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= batch)
    return;
  float *a = A + (size_t)t * n * n;
  for (int j = 0; j < n; j++) {
    float d = a[j * n + j];
    for (int k = 0; k < j; k++)
      d -= a[j * n + k] * a[j * n + k];
    d = sqrtf(d);
    a[j * n + j] = d;
    for (int i = j + 1; i < n; i++) {
      float s = a[i * n + j];
      for (int k = 0; k < j; k++)
        s -= a[i * n + k] * a[j * n + k];
      a[i * n + j] = s / d;
    }
  }
}
__global__ void cholesky_kernel(float *A, int n, int batch) {
  cholesky(A, n, batch);
}
__global__ void grad_cholesky(float *A, float *dA, int n, int batch) {
  __enzyme_autodiff<void>((void *)cholesky, enzyme_dup, A, dA, enzyme_const, n,
                          enzyme_const, batch);
}
