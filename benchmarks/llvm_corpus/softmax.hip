#include "common.h"
// Row softmax, one block per row of length n.
extern "C" __global__ void softmax(const float *x, float *y, int n) {
  __shared__ float red[256];
  int t = TID();
  const float *row = x + (long)BID() * n;
  float m = -__builtin_huge_valf();
  for (int j = t; j < n; j += 256) m = __builtin_fmaxf(m, row[j]);
  red[t] = m; SYNC();
  for (int k = 128; k; k >>= 1) { if (t < k) red[t] = __builtin_fmaxf(red[t], red[t + k]); SYNC(); }
  m = red[0]; SYNC();
  float s = 0;
  for (int j = t; j < n; j += 256) s += __builtin_expf(row[j] - m);
  red[t] = s; SYNC();
  for (int k = 128; k; k >>= 1) { if (t < k) red[t] += red[t + k]; SYNC(); }
  float inv = __builtin_amdgcn_rcpf(red[0]);
  for (int j = t; j < n; j += 256) y[(long)BID() * n + j] = __builtin_expf(row[j] - m) * inv;
}
