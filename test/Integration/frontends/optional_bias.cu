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
