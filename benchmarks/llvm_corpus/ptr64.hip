#include "common.h"
// 64-bit pointer arithmetic: large strides, pointer chasing, gathers.
struct node { node *next; long value; };
extern "C" __global__ void ptr64(node *heads, long *out, const long *offsets, const char *base, long stride) {
  int i = GID();
  node *p = heads + i;
  long s = 0;
  int hops = 0;
  while (p && hops < 64) { s += p->value; p = p->next; ++hops; }
  const char *q = base + (long)i * stride + offsets[i];
  s += *(const long *)q;
  out[i] = s + (long)(q - base);
}
