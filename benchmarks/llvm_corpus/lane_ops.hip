#include "common.h"
// Cross-lane operations: permlane16/permlanex16, ds_bpermute, update_dpp; fdot2, packed conversions,
// the clock, sleep and priority hints.
typedef _Float16 half2_t __attribute__((ext_vector_type(2)));
extern "C" __global__ void lane_ops(const int *in, int *out, const half2_t *h, float *f, unsigned long long *clk) {
  int i = GID();
  int v = in[i];
  long long t0 = __builtin_readcyclecounter();
  int a = __builtin_amdgcn_permlane16(v, v, 0x76543210, 0xfedcba98, false, false);
  int b = __builtin_amdgcn_permlanex16(v, v, 0x01234567, 0x89abcdef, false, false);
  int c = __builtin_amdgcn_ds_bpermute(((TID() + 1) & 31) << 2, v);
  int d = __builtin_amdgcn_update_dpp(0, v, 0x121, 0xf, 0xf, false);  // row_ror:1
  __builtin_amdgcn_s_setprio(2);
  float dot = __builtin_amdgcn_fdot2(h[i], h[i + 1], 1.0f, false);
  auto pk = __builtin_amdgcn_cvt_pkrtz(dot, (float)a);
  __builtin_amdgcn_s_setprio(0);
  __builtin_amdgcn_s_sleep(1);
  out[i] = a + b + c + d;
  f[i] = dot + (float)pk[0] + (float)pk[1];
  if (TID() == 0) clk[BID()] = __builtin_readcyclecounter() - t0;
}
