#include "common.h"
// LayerNorm with wave shuffles and rsqrt.
extern "C" __global__ void layernorm(const float *x, const float *g, const float *b, float *y, int n, float eps) {
  __shared__ float ps[8], pq[8];
  int t = TID();
  const float *row = x + (long)BID() * n;
  float s = 0, q = 0;
  for (int j = t; j < n; j += 256) { float v = row[j]; s += v; q += v * v; }
  for (int m = 16; m; m >>= 1) { s += __shfl_xor(s, m, 32); q += __shfl_xor(q, m, 32); }
  if ((t & 31) == 0) { ps[t >> 5] = s; pq[t >> 5] = q; }
  SYNC();
  s = 0; q = 0;
  for (int w = 0; w < 8; ++w) { s += ps[w]; q += pq[w]; }
  float mean = s / n, var = q / n - mean * mean;
  float r = __builtin_amdgcn_rsqf(var + eps);
  for (int j = t; j < n; j += 256) y[(long)BID() * n + j] = (row[j] - mean) * r * g[j] + b[j];
}
