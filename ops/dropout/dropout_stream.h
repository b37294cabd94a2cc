// The random stream of dropout and bernoulli, written once for every device:
// each element draws one 32-bit half of a SplitMix64 step over the stream's
// key (two elements per step, below). A draw depends only on (seed, i),
// never on threads, blocks or the device, so the CPU and CUDA kernels drop
// exactly the same elements for one seed, and on the CPU the loop is plain
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

// The key of row `row_key`'s stream under `seed` (example-keyed noise,
// ops/dropout/dropout_example_keys.h): unrelated to the whole-tensor stream
// and to every other row's.
ATTN_HD uint64_t row_stream_key(uint64_t seed, uint64_t row_key) {
  return mix64(stream_key(seed) ^ mix64(row_key ^ 0xBB67AE8584CAA73BULL));
}

// Elements i and i + kHalfBlock of each block of 2 kHalfBlock elements
// draw the high and low halves of one 64-bit mix (two 64-bit multiplies,
// emulated with three 32-bit ones each in AVX2), so a mix serves two
// elements and a CPU loop over a half block reads and writes contiguously.
constexpr int64_t kHalfBlock = 8192;

// The mixed word of pair `pair` (block * kHalfBlock + offset in the half).
ATTN_HD uint64_t draw_pair(uint64_t key, int64_t pair) {
  return mix64(key + (static_cast<uint64_t>(pair) + 1) * 0x9E3779B97F4A7C15ULL);
}

// Uniform in [0, 2^32) for element i of the stream `key`.
ATTN_HD uint32_t draw_u32(uint64_t key, int64_t i) {
  const int64_t block = i / (2 * kHalfBlock), offset = i % (2 * kHalfBlock);
  const uint64_t word = draw_pair(key, block * kHalfBlock + offset % kHalfBlock);
  return static_cast<uint32_t>(offset < kHalfBlock ? word >> 32 : word);
}

// r < threshold(p) drops an element: probability p to 2^-32.
constexpr double kTwoTo32 = 4294967296.0;

}  // namespace dropout_stream
}  // namespace attn
