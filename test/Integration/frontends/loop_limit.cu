// Kernels whose threads run many loop iterations: lavapipe ends every loop
// of a thread after 65535 iterations in all (test_loop_limit.py).

// n * m iterations of the inner loop per thread.
__global__ void count(float *out, int n, int m) {
  float acc = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      acc += 1.0f;
  out[threadIdx.x] = acc;
}

// Attention-style rows (flash-attention-minimal's shape, one K tile): each
// of `rows` iterations loads a row block of Q into shared memory, scores it
// against the K tile, and writes softmax(scores) K. The tiles are
// overwritten every iteration, so the gradient tapes the row loop in global
// memory and reverses each step's inner loops: its reverse sweep runs about
// 5,000 loop iterations per row.
#define B 16
#define D 16
__global__ void rows_attention(const float *Q, const float *K, float *O,
                               int rows, float scale) {
  int tx = threadIdx.x;
  __shared__ float Qi[B * D], Kj[B * D], S[B * B];
  for (int x = 0; x < D; x++)
    Kj[tx * D + x] = K[tx * D + x];
  __syncthreads();
  for (int i = 0; i < rows; i++) {
    for (int x = 0; x < D; x++)
      Qi[tx * D + x] = Q[i * B * D + tx * D + x];
    for (int y = 0; y < B; y++) {
      float sum = 0;
      for (int x = 0; x < D; x++)
        sum += Qi[tx * D + x] * Kj[y * D + x];
      S[B * tx + y] = sum * scale;
    }
    float total = 0;
    for (int y = 0; y < B; y++) {
      S[B * tx + y] = __expf(S[B * tx + y]);
      total += S[B * tx + y];
    }
    for (int x = 0; x < D; x++) {
      float pv = 0;
      for (int y = 0; y < B; y++)
        pv += S[B * tx + y] * Kj[y * D + x];
      O[i * B * D + tx * D + x] = pv / total;
    }
  }
}
