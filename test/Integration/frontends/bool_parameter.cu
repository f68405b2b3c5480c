// A `bool` kernel parameter (i1 zeroext in LLVM IR): a byte at launch
// (`i8:0`/`i8:1`), as C++ stores a bool; SPIR-V cannot pass an i1.
__global__ void pick(const float *x, float *y, bool negate, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = negate ? -x[i] : x[i];
}
