#include "common.h"
// Ballot, readfirstlane, readlane, stream compaction with mbcnt.
extern "C" __global__ void ballot(const int *in, int *out, int *count, int *first) {
  int i = GID();
  int v = in[i];
  bool keep = v > 0;
  unsigned long long mask = __ballot(keep);
  int lane = TID() % warpSize;
  unsigned lo = __builtin_amdgcn_mbcnt_lo((unsigned)mask, 0);
  int before = warpSize == 64 ? __builtin_amdgcn_mbcnt_hi((unsigned)(mask >> 32), lo) : lo;
  int base = 0;
  if (lane == 0) base = atomicAdd(count, __builtin_popcountll(mask));
  base = __builtin_amdgcn_readfirstlane(base);
  if (keep) out[base + before] = v;
  int leader = __builtin_amdgcn_readfirstlane(v);
  if (lane == 5) first[BID()] = leader + __builtin_amdgcn_readlane(v, 3);
}
