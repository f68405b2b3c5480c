// The backward pass of a causal softmax written the way hand-written
// attention kernels are: one thread per column, a four-deep loop nest
// (batches, heads, rows from the thread's column on, the row's prefix)
// inside the bounds check, accumulating into global memory. clang's loops at
// -O1/-O2/-O3 gave invalid SPIR-V here (an OpPhi naming a block that is not a
// predecessor).
__global__ void causal_softmax_grad(float *dlogits, const float *dprobs,
                                    const float *probs, int batches, int heads,
                                    int T) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (col < T) {
    for (int b = 0; b < batches; b++) {
      for (int h = 0; h < heads; h++) {
        for (int row = col; row < T; row++) {
          const float *p = probs + ((b * heads + h) * T + row) * T;
          const float *dp = dprobs + ((b * heads + h) * T + row) * T;
          float *out = dlogits + ((b * heads + h) * T + row) * T;
          for (int k = 0; k <= row; k++) {
            float delta = k == col ? 1.0f : 0.0f;
            out[col] += p[k] * (delta - p[col]) * dp[k];
          }
        }
      }
    }
  }
}
