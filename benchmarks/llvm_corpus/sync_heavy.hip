#include "common.h"
// Many barriers: ping-pong through LDS, a block-wide flag, and fences.
extern "C" __global__ void sync_heavy(float *data, int *flag, int iters) {
  __shared__ float a[256], b[256];
  __shared__ int any;
  int t = TID();
  a[t] = data[GID()];
  for (int it = 0; it < iters; ++it) {
    if (t == 0) any = 0;
    SYNC();
    b[t] = 0.5f * (a[t] + a[(t + 1) & 255]);
    SYNC();
    if (b[t] > 1.0f) any = 1;
    SYNC();
    a[t] = b[(t + 255) & 255];
    __threadfence_block();
    SYNC();
    if (!any) break;
  }
  data[GID()] = a[t];
  __threadfence();
  if (t == 0) atomicAdd(flag, 1);
}
