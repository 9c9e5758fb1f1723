#include "common.h"
// Row reductions with DPP moves and ds_swizzle.
extern "C" __global__ void reduce_dpp(const int *in, int *out) {
  int v = in[GID()];
  v += __builtin_amdgcn_mov_dpp(v, 0x111, 0xf, 0xf, false);  // row_shr:1
  v += __builtin_amdgcn_mov_dpp(v, 0x112, 0xf, 0xf, false);  // row_shr:2
  v += __builtin_amdgcn_mov_dpp(v, 0x114, 0xf, 0xe, false);  // row_shr:4
  v += __builtin_amdgcn_mov_dpp(v, 0x118, 0xf, 0xc, false);  // row_shr:8
  int s = __builtin_amdgcn_ds_swizzle(v, 0x401f);             // swap 16
  int r = v + s;
  float f = __builtin_bit_cast(float, r);
  f = __builtin_amdgcn_ds_swizzle(__builtin_bit_cast(int, f), 0x041f) * 0.5f;
  out[GID()] = r + (int)f;
}
