#include "common.h"
// A private array indexed with run-time values: scratch memory.
extern "C" __global__ void private_array(const int *idx, const float *in, float *out, int n) {
  float buf[64];
  int i = GID();
  for (int k = 0; k < 64; ++k) buf[k] = in[(i + k) % n];
  float s = 0;
  for (int k = 0; k < 16; ++k) s += buf[idx[i * 16 + k] & 63];
  buf[idx[i] & 63] = s;
  out[i] = buf[(i * 7) & 63] + s;
}
