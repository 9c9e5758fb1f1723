#include "common.h"
// FP64 math: fma, division, sqrt, conversions, a Horner polynomial.
extern "C" __global__ void fp64(const double *a, const double *b, double *c, float *f, int n) {
  int i = GID();
  if (i >= n) return;
  double x = a[i], y = b[i];
  double p = 1.0;
  for (int k = 0; k < 8; ++k) p = __builtin_fma(p, x, 1.0 / (k + 1));
  double q = x / (y + 2.0) + __builtin_sqrt(__builtin_fabs(y));
  c[i] = p * q + __builtin_fmin(x, y) - __builtin_floor(x);
  f[i] = (float)(p - q) + (float)__builtin_amdgcn_rsq(y * y + 1.0);
}
