#include "common.h"
// Bitonic sort of 512 keys in LDS, 256 threads.
extern "C" __global__ void bitonic(unsigned *data) {
  __shared__ unsigned s[512];
  int t = TID();
  unsigned *d = data + BID() * 512;
  s[t] = d[t]; s[t + 256] = d[t + 256];
  SYNC();
  for (int k = 2; k <= 512; k <<= 1)
    for (int j = k >> 1; j > 0; j >>= 1) {
      int i = 2 * t - (t & (j - 1));
      int l = i + j;
      bool up = (i & k) == 0;
      unsigned a = s[i], b = s[l];
      if ((a > b) == up) { s[i] = b; s[l] = a; }
      SYNC();
    }
  d[t] = s[t]; d[t + 256] = s[t + 256];
}
