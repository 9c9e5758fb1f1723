#include "common.h"
// 2D 5-point stencil with a tile in LDS and boundary branches.
extern "C" __global__ void stencil(const float *in, float *out, int w, int h) {
  __shared__ float tile[18][18];
  int tx = TID() & 15, ty = TID() >> 4;
  int x = (int)__builtin_amdgcn_workgroup_id_x() * 16 + tx;
  int y = (int)__builtin_amdgcn_workgroup_id_y() * 16 + ty;
  bool in_ = x < w && y < h;
  tile[ty + 1][tx + 1] = in_ ? in[y * w + x] : 0.0f;
  if (tx == 0) tile[ty + 1][0] = (x > 0 && y < h) ? in[y * w + x - 1] : 0.0f;
  if (tx == 15) tile[ty + 1][17] = (x + 1 < w && y < h) ? in[y * w + x + 1] : 0.0f;
  if (ty == 0) tile[0][tx + 1] = (y > 0 && x < w) ? in[(y - 1) * w + x] : 0.0f;
  if (ty == 15) tile[17][tx + 1] = (y + 1 < h && x < w) ? in[(y + 1) * w + x] : 0.0f;
  SYNC();
  if (!in_) return;
  if (x == 0 || y == 0 || x == w - 1 || y == h - 1) { out[y * w + x] = tile[ty + 1][tx + 1]; return; }
  out[y * w + x] = 0.2f * (tile[ty + 1][tx + 1] + tile[ty][tx + 1] + tile[ty + 2][tx + 1] +
                           tile[ty + 1][tx] + tile[ty + 1][tx + 2]);
}
