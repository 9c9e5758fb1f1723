#include "common.h"
// Blelloch-style inclusive scan in LDS (Hillis-Steele), 256 per block.
extern "C" __global__ void scan(const int *in, int *out, int n) {
  __shared__ int a[2][256];
  int t = TID(), i = GID(), p = 0;
  a[0][t] = i < n ? in[i] : 0;
  SYNC();
  for (int off = 1; off < 256; off <<= 1) {
    int v = a[p][t];
    if (t >= off) v += a[p][t - off];
    a[p ^ 1][t] = v;
    p ^= 1;
    SYNC();
  }
  if (i < n) out[i] = a[p][t];
}
