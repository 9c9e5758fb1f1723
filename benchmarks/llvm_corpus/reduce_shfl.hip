#include "common.h"
// Wave reduction with __shfl_xor, then LDS across waves.
extern "C" __global__ void reduce_shfl(const float *in, float *out, int n) {
  __shared__ float part[32];
  int i = GID();
  float v = i < n ? in[i] : 0.0f;
  for (int m = warpSize / 2; m > 0; m >>= 1) v += __shfl_xor(v, m);
  int lane = TID() % warpSize, w = TID() / warpSize;
  if (lane == 0) part[w] = v;
  SYNC();
  if (w == 0) {
    v = lane < 256 / warpSize ? part[lane] : 0.0f;
    for (int m = warpSize / 2; m > 0; m >>= 1) v += __shfl_xor(v, m);
    if (lane == 0) atomicAdd(out, v);
  }
}
