#include "common.h"
// Threads that leave early, from several depths, with work after them.
extern "C" __global__ void early_return(const int *in, int *out, int n) {
  int i = GID();
  if (i >= n) return;
  int v = in[i];
  if (v < 0) { out[i] = -1; return; }
  for (int k = 0; k < v; ++k) {
    if (in[(i + k) % n] == 0) { out[i] = k; return; }
  }
  if (v & 1) return;
  out[i] = v * 2;
}
