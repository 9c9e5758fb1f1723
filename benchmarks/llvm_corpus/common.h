// Shared helpers for the LLVM-output corpus: no ROCm device libraries (-nogpulib).
#pragma once
#include <hip/hip_runtime.h>
#define TID() ((int)__builtin_amdgcn_workitem_id_x())
#define BID() ((int)__builtin_amdgcn_workgroup_id_x())
#define GID() (BID() * 256 + TID())
#define SYNC() __syncthreads()
