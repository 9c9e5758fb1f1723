#include "common.h"
// __any / __all votes steering uniform and divergent branches. The HIP header implements them as calls
// to the device library (__ockl_wfany_i32...), left unresolved with -nogpulib: the assembly is checked,
// the object would not link. A call between a hint and the instruction it names is kept that way.
extern "C" __global__ void wave_vote(const float *x, float *y, int *flags, int n) {
  int i = GID();
  float v = i < n ? x[i] : 0.0f;
  if (__all(v >= 0.0f)) v = __builtin_sqrtf(v);
  else if (__any(v < -100.0f)) { v = -1.0f; if ((TID() & 63) == 0) atomicOr(flags, 1 << (BID() & 31)); }
  if (i < n) y[i] = v;
}
