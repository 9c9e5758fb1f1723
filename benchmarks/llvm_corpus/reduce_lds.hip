#include "common.h"
// LDS tree reduction of 256 floats per block.
extern "C" __global__ void reduce_lds(const float *in, float *out, int n) {
  __shared__ float s[256];
  int t = TID(), i = GID();
  s[t] = i < n ? in[i] : 0.0f;
  SYNC();
  for (int k = 128; k > 0; k >>= 1) {
    if (t < k) s[t] += s[t + k];
    SYNC();
  }
  if (t == 0) out[BID()] = s[0];
}
