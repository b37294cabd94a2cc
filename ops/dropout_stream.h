// The random stream of dropout and bernoulli, written once for every device:
// element i of a stream draws a uniform 32-bit number from a SplitMix64 step
// at counter i over the stream's key. A draw depends only on (seed, i), never
// on threads, blocks or the device, so the CPU and CUDA kernels drop exactly
// the same elements for one seed, and on the CPU the loop over i is plain
// integer arithmetic that vectorises (no generator state carried from one
// element to the next).
#pragma once
#include <cstdint>

#include "attn/ops/host_device.h"

namespace attn {
namespace dropout_stream {

// SplitMix64's finaliser: a bijection whose output bits each depend on every
// input bit.
ATTN_HD uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// The key of the stream for `seed`: seeds that differ in one bit give
// unrelated streams.
ATTN_HD uint64_t stream_key(uint64_t seed) { return mix64(seed ^ 0x6A09E667F3BCC909ULL); }

// Uniform in [0, 2^32) for element i of the stream `key` (the high half of
// the mixed word).
ATTN_HD uint32_t draw_u32(uint64_t key, int64_t i) {
  const uint64_t z = mix64(key + (static_cast<uint64_t>(i) + 1) * 0x9E3779B97F4A7C15ULL);
  return static_cast<uint32_t>(z >> 32);
}

// r < threshold(p) drops an element: probability p to 2^-32.
constexpr double kTwoTo32 = 4294967296.0;

}  // namespace dropout_stream
}  // namespace attn
