#include "common.h"
// One 16x16x16 WMMA tile per wave (f16 in, f32 accumulate), wave32 or wave64 builtin by the build.
typedef _Float16 half16 __attribute__((ext_vector_type(16)));
#if __AMDGCN_WAVEFRONT_SIZE == 64
typedef float floatacc __attribute__((ext_vector_type(4)));
#define WMMA __builtin_amdgcn_wmma_f32_16x16x16_f16_w64
#else
typedef float floatacc __attribute__((ext_vector_type(8)));
#define WMMA __builtin_amdgcn_wmma_f32_16x16x16_f16_w32
#endif
extern "C" __global__ void wmma(const half16 *a, const half16 *b, floatacc *c, int k_tiles) {
  int lane = TID() % warpSize, w = GID() / warpSize;
  floatacc acc = {};
  for (int k = 0; k < k_tiles; ++k) {
    half16 x = a[(w * k_tiles + k) * 16 + (lane & 15)];
    half16 y = b[(k * 16) + (lane & 15)];
    acc = WMMA(x, y, acc);
  }
  c[w * warpSize + lane] = acc;
}
