// What device code sees in the emulated CUDA build: the qualifiers (empty),
// the built-in index variables, barriers, warp shuffles, atomics and bit
// casts. Kernels run as fibers of one OS thread (engine/cuda/emulate/grid.cpp),
// so the index variables are plain globals the scheduler sets before it
// resumes a fiber, and an atomic is an ordinary read-modify-write.
#pragma once
// <math.h> (libstdc++) puts the float overloads of exp, log, tanh, fmax, ...
// into the global namespace, as CUDA's math API has them for device code.
#include <math.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
// __shared__ is left undefined on purpose: kernels declare shared arrays with
// ATTN_SHARED (engine/cuda/cuda_kernel.h), which gives each block its own.

struct uint3 {
  unsigned x, y, z;
};
struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned vx = 1, unsigned vy = 1, unsigned vz = 1) : x(vx), y(vy), z(vz) {}
};

// Set by the scheduler for the fiber it resumes.
inline uint3 threadIdx{0, 0, 0};
inline uint3 blockIdx{0, 0, 0};
inline dim3 blockDim{1, 1, 1};
inline dim3 gridDim{1, 1, 1};

namespace attn {
namespace emu {
// engine/cuda/emulate/grid.cpp
void sync_block();
// Posts `bits` at the warp barrier of the calling lane and returns what lane
// src_lane posted (its own bits when src_lane is outside the warp).
uint64_t warp_exchange(unsigned mask, uint64_t bits, int src_lane);
int lane_id();
// Storage of one __shared__ array of the running block (site: its declaration).
void* block_shared(const void* site, size_t bytes);

template <class T>
uint64_t to_bits(T v) {
  static_assert(std::is_trivially_copyable<T>::value && sizeof(T) <= 8, "a shuffle moves at most 8 bytes");
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof(T));
  return bits;
}
template <class T>
T from_bits(uint64_t bits) {
  T v;
  std::memcpy(&v, &bits, sizeof(T));
  return v;
}
}  // namespace emu
}  // namespace attn

inline void __syncthreads() { ::attn::emu::sync_block(); }
inline void __syncwarp(unsigned mask = 0xffffffffu) {
  ::attn::emu::warp_exchange(mask, 0, ::attn::emu::lane_id());
}

template <class T>
T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = 32) {
  const int lane = ::attn::emu::lane_id();
  const int src = (lane & ~(width - 1)) + (((lane % width) ^ lane_mask) % width);
  return ::attn::emu::from_bits<T>(::attn::emu::warp_exchange(mask, ::attn::emu::to_bits(v), src));
}
template <class T>
T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = 32) {
  const int lane = ::attn::emu::lane_id();
  const int in_group = lane % width + static_cast<int>(delta);
  const int src = in_group < width ? lane + static_cast<int>(delta) : lane;
  return ::attn::emu::from_bits<T>(::attn::emu::warp_exchange(mask, ::attn::emu::to_bits(v), src));
}
template <class T>
T __shfl_sync(unsigned mask, T v, int src_lane, int width = 32) {
  const int lane = ::attn::emu::lane_id();
  const int src = (lane & ~(width - 1)) + src_lane % width;
  return ::attn::emu::from_bits<T>(::attn::emu::warp_exchange(mask, ::attn::emu::to_bits(v), src));
}

inline float __int_as_float(int v) { return ::attn::emu::from_bits<float>(static_cast<uint32_t>(v)); }
inline int __float_as_int(float v) { return static_cast<int>(static_cast<uint32_t>(::attn::emu::to_bits(v))); }
inline double __longlong_as_double(long long v) { return ::attn::emu::from_bits<double>(static_cast<uint64_t>(v)); }
inline long long __double_as_longlong(double v) { return static_cast<long long>(::attn::emu::to_bits(v)); }

// One OS thread runs every fiber and switches only at barriers, so a plain
// read-modify-write is atomic. Each returns the old value, as CUDA's do.
#define ATTN_EMU_ATOMIC(name, T, expr) \
  inline T name(T* p, T v) {           \
    const T old = *p;                  \
    *p = (expr);                       \
    return old;                        \
  }
ATTN_EMU_ATOMIC(atomicAdd, float, old + v)
ATTN_EMU_ATOMIC(atomicAdd, double, old + v)
ATTN_EMU_ATOMIC(atomicAdd, int, old + v)
ATTN_EMU_ATOMIC(atomicAdd, unsigned, old + v)
ATTN_EMU_ATOMIC(atomicAdd, unsigned long long, old + v)
ATTN_EMU_ATOMIC(atomicMin, int, v < old ? v : old)
ATTN_EMU_ATOMIC(atomicMin, unsigned long long, v < old ? v : old)
ATTN_EMU_ATOMIC(atomicMax, int, v > old ? v : old)
ATTN_EMU_ATOMIC(atomicMax, unsigned long long, v > old ? v : old)
#undef ATTN_EMU_ATOMIC
inline unsigned long long atomicCAS(unsigned long long* p, unsigned long long compare, unsigned long long v) {
  const unsigned long long old = *p;
  if (old == compare) *p = v;
  return old;
}
