#include "common.h"
// A switch on per-thread data (divergent) and one on a uniform argument (a jump table perhaps).
extern "C" __global__ void switch_case(const int *op, const float *x, float *y, int mode, int n) {
  int i = GID();
  if (i >= n) return;
  float v = x[i];
  switch (op[i]) {
    case 0: v = v + 1; break;
    case 1: v = v * v; break;
    case 2: v = __builtin_sqrtf(__builtin_fabsf(v)); break;
    case 3: v = -v; break;
    case 7: v = __builtin_expf(v); break;
    default: v = 0; break;
  }
  switch (mode) {
    case 0: y[i] = v; break;
    case 1: y[i] += v; break;
    case 2: y[i] = __builtin_fmaxf(y[i], v); break;
    case 3: y[i] = __builtin_fminf(y[i], v); break;
    case 4: y[i] *= v; break;
    case 5: y[i] -= v; break;
    default: break;
  }
}
