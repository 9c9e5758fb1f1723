#include "common.h"
// Tiled transpose with a padded LDS tile (32x8 threads, 32x32 tile).
extern "C" __global__ void transpose(const float *in, float *out, int w, int h) {
  __shared__ float tile[32][33];
  int tx = TID() & 31, ty = TID() >> 5;
  int bx = (int)__builtin_amdgcn_workgroup_id_x() * 32, by = (int)__builtin_amdgcn_workgroup_id_y() * 32;
  for (int j = ty; j < 32; j += 8)
    if (bx + tx < w && by + j < h) tile[j][tx] = in[(long)(by + j) * w + bx + tx];
  SYNC();
  for (int j = ty; j < 32; j += 8)
    if (by + tx < h && bx + j < w) out[(long)(bx + j) * h + by + tx] = tile[tx][j];
}
