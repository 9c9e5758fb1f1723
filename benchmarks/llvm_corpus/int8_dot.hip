#include "common.h"
// int8 and uint8 dot products (v_dot4_i32_iu8 / v_dot4_u32_u8).
extern "C" __global__ void int8_dot(const int *a, const int *b, int *c, unsigned *d, int n) {
  int i = GID();
  int acc = 0;
  unsigned uacc = 0;
  for (int k = 0; k < n; ++k) {
    int x = a[i * n + k], y = b[k];
    acc = __builtin_amdgcn_sudot4(true, x, true, y, acc, false);
    uacc = __builtin_amdgcn_udot4((unsigned)x, (unsigned)y, uacc, true);
  }
  c[i] = acc;
  d[i] = uacc;
}
