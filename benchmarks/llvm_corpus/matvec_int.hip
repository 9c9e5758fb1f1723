#include "common.h"
// Integer work: 64-bit multiply, division by run-time values, bit tricks.
extern "C" __global__ void matvec_int(const unsigned *a, unsigned long long *out, unsigned d, int n) {
  int i = GID();
  if (i >= n) return;
  unsigned x = a[i];
  unsigned long long p = (unsigned long long)x * 0x9E3779B97F4A7C15ull;
  unsigned q = x / (d | 1), r = x % (d | 1);
  int lz = __builtin_clz(x | 1), tz = __builtin_ctz(x | 0x80000000u);
  unsigned rev = __builtin_bitreverse32(x);
  long long sd = (long long)(int)x / (long long)(int)(d | 1);
  out[i] = p ^ ((unsigned long long)q << 32) ^ r ^ lz ^ tz ^ rev ^ (unsigned long long)sd;
}
