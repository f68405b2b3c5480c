// Control-flow shapes clang makes of ordinary code (found by
// scripts/fuzz_cuda_cfg.py): a switch whose cases and break cover every value
// (clang makes its default unreachable; three cases or more gave invalid IR),
// and a two-trip loop with break and continue on lane and data conditions
// (unrolled into a many-predecessor merge; at -O1 the exit taken became an
// i1-to-index cast SPIR-V could not lower).
__global__ void shapes(float *out, const float *in, int n, int m) {
  int tid = blockIdx.x * blockDim.x + threadIdx.x;
  if (tid >= n)
    return;
  float a = in[tid];
  switch (tid & 3) {
  case 1:
    a += in[0];
    break;
  case 3:
    a *= 2.0f;
    break;
  case 0:
    a -= 1.0f;
    break;
  }
  float s = 0.0f;
  for (int i = 0; i < 2; ++i) {
    s += in[(tid + i) % n];
    if (i < m) {
      if (threadIdx.x < 61)
        break;
      a += s;
    } else {
      if (threadIdx.x == 0) {
        a += 1.0f;
        continue;
      }
      if (n > 27)
        continue;
    }
    a += in[threadIdx.x % n];
  }
  out[tid] = a + s;
}
