#include "common.h"
// Dynamic LDS (extern __shared__), scoped fences, a barrier by builtin, and a grid-stride loop.
extern "C" __global__ void dyn_lds(const float *in, float *out, int n, int chunk) {
  extern __shared__ float buf[];
  int t = TID();
  for (int base = BID() * chunk; base < n; base += chunk * (int)__builtin_amdgcn_grid_size_x() / 256) {
    for (int j = t; j < chunk && base + j < n; j += 256) buf[j] = in[base + j];
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
    __builtin_amdgcn_s_barrier();
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
    for (int j = t; j < chunk && base + j < n; j += 256) out[base + j] = buf[chunk - 1 - j] * 2.0f;
    __builtin_amdgcn_fence(__ATOMIC_SEQ_CST, "agent");
    __builtin_amdgcn_s_barrier();
  }
}
