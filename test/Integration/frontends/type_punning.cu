// One object accessed as several types: a flag kept in the sign byte of a
// float (set through an unsigned char view, read back as float), the float's
// low byte read as a byte, and its bits read as an int. The object is raised
// as bytes; wider accesses are joined little-endian.
__global__ void mark(float *data, unsigned char *low, int *negative, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    unsigned char *bytes = reinterpret_cast<unsigned char *>(data);
    low[i] = bytes[4 * i];
    bytes[4 * i + 3] |= 0x80;
    negative[i] = reinterpret_cast<int *>(data)[i] < 0;
    data[i] = data[i] * 2.0f;
  }
}
