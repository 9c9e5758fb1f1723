#include "common.h"
// LDS atomics of many kinds and a return-value use; float atomics in LDS and global.
extern "C" __global__ void lds_atomics(const int *in, int *out, float *gf) {
  __shared__ int mn, mx, sum;
  __shared__ unsigned bits;
  __shared__ float fsum;
  int t = TID();
  if (t == 0) { mn = 0x7fffffff; mx = -0x7fffffff; sum = 0; bits = 0; fsum = 0; }
  SYNC();
  int v = in[GID()];
  atomicMin(&mn, v);
  atomicMax(&mx, v);
  int old = atomicAdd(&sum, v);
  atomicOr(&bits, 1u << (v & 31));
  atomicAdd(&fsum, (float)v);
  int ex = atomicExch(&sum, sum);
  SYNC();
  out[GID()] = old + ex;
  if (t == 0) { out[BID() * 4 + 0] = mn; out[BID() * 4 + 1] = mx; out[BID() * 4 + 2] = (int)bits; atomicAdd(gf, fsum); }
}
