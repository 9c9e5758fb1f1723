#include "common.h"
// memcpy-like float4 copies with a scalar tail, plus __builtin_memcpy of a struct.
struct rec { float a[6]; int tag; int pad; };
extern "C" __global__ void vec_copy(const float4 *src, float4 *dst, const float *s1, float *d1, long n,
                                    const rec *rs, rec *rd) {
  long i = GID();
  long n4 = n / 4;
  for (long k = i; k < n4; k += 256L * __builtin_amdgcn_grid_size_x()) dst[k] = src[k];
  if (i < n - n4 * 4) d1[n4 * 4 + i] = s1[n4 * 4 + i];
  rec r;
  __builtin_memcpy(&r, rs + i, sizeof r);
  r.tag += 1;
  __builtin_memcpy(rd + i, &r, sizeof r);
}
