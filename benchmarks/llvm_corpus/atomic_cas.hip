#include "common.h"
// atomicCAS loops: float max and a 64-bit add through compare-and-swap.
__device__ float atomic_max_f(float *a, float v) {
  unsigned *p = (unsigned *)a;
  unsigned old = *p, assumed;
  do {
    assumed = old;
    if (__builtin_bit_cast(float, assumed) >= v) break;
    old = atomicCAS(p, assumed, __builtin_bit_cast(unsigned, v));
  } while (old != assumed);
  return __builtin_bit_cast(float, old);
}
extern "C" __global__ void atomic_cas(const float *in, float *mx, unsigned long long *sum, int n) {
  int i = GID();
  if (i >= n) return;
  atomic_max_f(mx, in[i]);
  unsigned long long old = *sum, assumed;
  do {
    assumed = old;
    old = atomicCAS(sum, assumed, assumed + (unsigned long long)(in[i] * 1000.0f));
  } while (old != assumed);
}
