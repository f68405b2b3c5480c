// While loops whose trip counts are known only as they run and that
// overwrite what they read: linked lists walked and updated in place (node
// pools of graph and mesh codes, one list per thread), and a fixed-point
// iteration on a thread's row until it settles. The adjoint tapes their
// steps in a global-memory tape that grows: the launcher gives each thread
// a capacity, a thread that needs more reports it, and the launch runs again
// from its inputs with that capacity.
#include "enzyme.h"

// Each thread walks its list (head[t], next[i], -1 ends it), blending every
// node with what came before it.
__device__ void relax_lists(float *x, const int *head, const int *next,
                            int lists) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= lists)
    return;
  float carry = 0.0f;
  int i = head[t];
  while (i >= 0) {
    float v = x[i];
    x[i] = v * 0.9f + tanhf(carry);
    carry = v + x[i];
    i = next[i];
  }
}
__global__ void relax_lists_kernel(float *x, const int *head, const int *next,
                                   int lists) {
  relax_lists(x, head, next, lists);
}
__global__ void grad_relax_lists(float *x, float *dx, const int *head,
                                 const int *next, int lists) {
  __enzyme_autodiff<void>((void *)relax_lists, enzyme_dup, x, dx, enzyme_const,
                          head, enzyme_const, next, enzyme_const, lists);
}

// A thread's row of 4 relaxed in place until the largest change is below
// `tol`: the exit depends on the data.
__device__ void settle_rows(float *x, float tol, int rows) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= rows)
    return;
  float *v = x + 4 * t;
  float change = 1e30f;
  while (change > tol) {
    change = 0.0f;
    for (int k = 0; k < 4; k++) {
      float next = 0.5f * v[k] + 0.25f * sinf(v[(k + 1) & 3]);
      change = fmaxf(change, fabsf(next - v[k]));
      v[k] = next;
    }
  }
}
__global__ void settle_rows_kernel(float *x, float tol, int rows) {
  settle_rows(x, tol, rows);
}
__global__ void grad_settle_rows(float *x, float *dx, float tol, int rows) {
  __enzyme_autodiff<void>((void *)settle_rows, enzyme_dup, x, dx, enzyme_const,
                          tol, enzyme_const, rows);
}

// Each thread drains its queue of pending smoothing steps and clears it:
// the loop's bound is read from memory the kernel writes (count[t] = 0
// after), so no launcher can compute it beforehand; the tape grows.
__device__ void drain(float *x, int *count, int width, int threads) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= threads)
    return;
  float *row = x + t * width;
  int n = count[t];
  for (int j = 1; j < n; j++)
    row[j] = row[j] * 0.5f + sinf(row[j - 1]);
  count[t] = 0;
}
__global__ void grad_drain(float *x, float *dx, int *count, int width,
                           int threads) {
  __enzyme_autodiff<void>((void *)drain, enzyme_dup, x, dx, enzyme_const,
                          count, enzyme_const, width, enzyme_const, threads);
}

// Several passes over each list: the while loop runs inside a loop taped in
// global memory, its steps kept per pass (and its step count with them).
__device__ void relax_lists_passes(float *x, const int *head, const int *next,
                                   int lists, int passes) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= lists)
    return;
  for (int p = 0; p < passes; p++) {
    float carry = 0.25f * p;
    int i = head[t];
    while (i >= 0) {
      float v = x[i];
      x[i] = v * 0.9f + tanhf(carry);
      carry = v + x[i];
      i = next[i];
    }
  }
}
__global__ void grad_relax_lists_passes(float *x, float *dx, const int *head,
                                        const int *next, int lists,
                                        int passes) {
  __enzyme_autodiff<void>((void *)relax_lists_passes, enzyme_dup, x, dx,
                          enzyme_const, head, enzyme_const, next, enzyme_const,
                          lists, enzyme_const, passes);
}

// Each thread walks its list of groups and, in each, the group's members:
// a while loop inside a while loop, both walking lists in place. The inner
// loop's tape has the capacity's slots per step of the outer one.
__device__ void relax_groups(float *x, const int *head, const int *next_group,
                             const int *first_member, const int *next_member,
                             int lists) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= lists)
    return;
  float carry = 0.0f;
  for (int g = head[t]; g >= 0; g = next_group[g])
    for (int i = first_member[g]; i >= 0; i = next_member[i]) {
      float v = x[i];
      x[i] = v * 0.9f + tanhf(carry);
      carry = 0.5f * (v + x[i]);
    }
}
__global__ void grad_relax_groups(float *x, float *dx, const int *head,
                                  const int *next_group,
                                  const int *first_member,
                                  const int *next_member, int lists) {
  __enzyme_autodiff<void>((void *)relax_groups, enzyme_dup, x, dx,
                          enzyme_const, head, enzyme_const, next_group,
                          enzyme_const, first_member, enzyme_const,
                          next_member, enzyme_const, lists);
}
