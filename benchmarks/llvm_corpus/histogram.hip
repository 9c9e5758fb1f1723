#include "common.h"
// Histogram: LDS atomics per block, then global atomics.
extern "C" __global__ void histogram(const unsigned char *in, unsigned *hist, int n) {
  __shared__ unsigned h[256];
  int t = TID();
  h[t] = 0;
  SYNC();
  for (int i = GID(); i < n; i += 256 * (int)__builtin_amdgcn_grid_size_x())
    atomicAdd(&h[in[i]], 1u);
  SYNC();
  if (h[t]) atomicAdd(&hist[t], h[t]);
}
