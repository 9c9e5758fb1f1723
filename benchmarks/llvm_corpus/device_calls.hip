#include "common.h"
// Non-inlined device functions: calls, stack arguments, callee-saved registers.
__attribute__((noinline)) __device__ float poly(float x, float a, float b, float c, float d) {
  return ((a * x + b) * x + c) * x + d;
}
__attribute__((noinline)) __device__ float4 mix4(float4 u, float4 v, float t) {
  return make_float4(u.x + t * (v.x - u.x), u.y + t * (v.y - u.y), u.z + t * (v.z - u.z), u.w + t * (v.w - u.w));
}
__attribute__((noinline)) __device__ int collatz(unsigned x) {
  int n = 0;
  while (x > 1 && n < 1000) { x = (x & 1) ? 3 * x + 1 : x >> 1; ++n; }
  return n;
}
extern "C" __global__ void device_calls(const float4 *a, const float4 *b, float4 *c, int *steps, int n) {
  int i = GID();
  if (i >= n) return;
  float t = poly((float)i / n, 1.f, -2.f, 0.5f, 0.25f);
  c[i] = mix4(a[i], b[i], t);
  steps[i] = collatz((unsigned)i + 1);
}
