// The two constructs of kernel code that differ between a real CUDA build
// (nvcc) and the emulated one (ATTN_CUDA=EMULATE, engine/cuda/emulate/):
//
//   ATTN_CUDA_LAUNCH(grid, block, shared_bytes, stream, kernel<...>)(args...);
//     nvcc: kernel<...><<<grid, block, shared_bytes, stream>>>(args...)
//     emulated: runs the grid on the CPU, one fiber per thread.
//   ATTN_SHARED(type, name, [dims]...);
//     nvcc: __shared__ type name[dims]...;
//     emulated: a reference to this block's own instance of the array.
//
// Every launch and every shared array of the backend goes through them, so
// the same .cu sources build both ways. Included only by CUDA sources.
#pragma once
#include <cuda_runtime.h>

#ifdef ATTN_CUDA_EMULATED
#include "attn/engine/cuda/emulate/launch.h"

#define ATTN_CUDA_LAUNCH(grid, block, shared, stream, ...) \
  ::attn::emu::launch(#__VA_ARGS__, (grid), (block), (shared), (stream), __VA_ARGS__)
// The address of a static local identifies the declaration, so every thread
// of the block that runs it gets the same array.
#define ATTN_SHARED(type, name, dims)                 \
  static char attn_shared_site_##name;                \
  type(&name) dims = ::attn::emu::shared_array<type dims>(&attn_shared_site_##name)
#else
#define ATTN_CUDA_LAUNCH(grid, block, shared, stream, ...) __VA_ARGS__<<<(grid), (block), (shared), (stream)>>>
#define ATTN_SHARED(type, name, dims) __shared__ type name dims
#endif
