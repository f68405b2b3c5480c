// Dynamic shared memory (`extern __shared__`, sized by the launch): the
// classic tree reduction of a block into its total, the shared array's size
// given as the launch's third parameter.
__global__ void block_totals(const float *x, float *totals, int n) {
  extern __shared__ float partial[];
  unsigned t = threadIdx.x;
  unsigned i = blockIdx.x * blockDim.x + t;
  partial[t] = i < n ? x[i] : 0.0f;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (t < s)
      partial[t] += partial[t + s];
    __syncthreads();
  }
  if (t == 0)
    totals[blockIdx.x] = partial[0];
}
