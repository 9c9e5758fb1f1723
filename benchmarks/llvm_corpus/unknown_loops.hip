#include "common.h"
// Loops with run-time trip counts, nested, with a data-dependent exit.
extern "C" __global__ void unknown_loops(const float *a, float *b, const int *len, int rows) {
  int r = GID();
  if (r >= rows) return;
  int n = len[r];
  float acc = 0;
  for (int j = 0; j < n; ++j) {
    float x = a[r * 1024 + j];
    int m = (int)x & 15;
    for (int k = 0; k < m; ++k) acc = acc * 0.99f + x;
    while (acc > 1e6f) acc *= 0.5f;
  }
  b[r] = acc;
}
