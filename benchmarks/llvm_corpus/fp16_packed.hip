#include "common.h"
typedef _Float16 half2_t __attribute__((ext_vector_type(2)));
typedef _Float16 half4_t __attribute__((ext_vector_type(4)));
// Packed FP16 axpy and dot, and a bf16 round trip through bit operations.
extern "C" __global__ void fp16_packed(const half4_t *x, half4_t *y, _Float16 a, float *dot,
                                       const unsigned short *bf, float *bfo, int n) {
  int i = GID();
  if (i >= n) return;
  half4_t v = x[i], w = y[i];
  half4_t r = v * (half4_t)a + w;
  y[i] = r;
  half2_t lo = r.xy, hi = r.zw;
  half2_t s = lo * hi;
  dot[i] = (float)s.x + (float)s.y;
  float f = __builtin_bit_cast(float, (unsigned)bf[i] << 16);
  f = f * 1.5f;
  unsigned u = __builtin_bit_cast(unsigned, f);
  bfo[i] = __builtin_bit_cast(float, (u + 0x7fff + ((u >> 16) & 1)) & 0xffff0000u);
}
