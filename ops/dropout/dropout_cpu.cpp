// CPU kernels of the dropout family. Every element draws from the stateless
// stream of ops/dropout/dropout_stream.h (its row's stream, at its index in the
// row), so chunks run on any thread in any order and the mask equals the
// CUDA kernel's for the same keys. The per-chunk
// loops are SIMD clones: the draw is integer arithmetic on the index alone,
// so AVX-512 runs eight 64-bit mixes at once, each serving two elements.
#include <algorithm>
#include <cmath>

#include "attn/engine/cpu_loops.h"
#include "attn/engine/parallel.h"
#include "attn/ops/dropout/dropout_kernels.h"
#include "attn/ops/dropout/dropout_stream.h"
#include "attn/ops/cpu/vector_math.h"

namespace attn {

namespace {

using dropout_stream::draw_pair;
using dropout_stream::kHalfBlock;
using dropout_stream::kTwoTo32;

constexpr int64_t kChunk = 2 * kHalfBlock;  // elements per parallel task: one block of a row's stream

// Runs element(i, draw) for i in [i0, i1), one block of the stream
// (i0 = block * 2 kHalfBlock): each mix serves i and i + kHalfBlock, and
// the loop over the pairs' first halves vectorises.
template <class F>
inline __attribute__((always_inline)) void for_each_draw(uint64_t key, int64_t i0, int64_t i1, const F& element) {
  const int64_t first_pair = i0 / 2, len = i1 - i0;
  const int64_t both = std::max<int64_t>(0, len - kHalfBlock), firsts = std::min(len, kHalfBlock);
  for (int64_t o = 0; o < both; ++o) {
    const uint64_t word = draw_pair(key, first_pair + o);
    element(i0 + o, static_cast<uint32_t>(word >> 32));
    element(i0 + kHalfBlock + o, static_cast<uint32_t>(word));
  }
  for (int64_t o = both; o < firsts; ++o) element(i0 + o, static_cast<uint32_t>(draw_pair(key, first_pair + o) >> 32));
}

template <class T>
ATTN_SIMD_CLONES void dropout_chunk(const T* __restrict x, int64_t i0, int64_t i1, uint64_t key, uint64_t threshold,
                                    T scale, T* __restrict out, uint8_t* __restrict mask) {
  for_each_draw(key, i0, i1, [&](int64_t i, uint32_t draw) {
    // Branch-free: a random keep/drop branch mispredicts at the drop rate.
    // x is read unconditionally: read under the condition, it became a
    // masked load (vmaskmovps).
    const bool keep = static_cast<uint64_t>(draw) >= threshold;
    const T value = x[i] * scale;
    mask[i] = static_cast<uint8_t>(keep);
    out[i] = keep ? value : T(0);
  });
}

template <class T>
ATTN_SIMD_CLONES void dropout_backward_chunk(const T* __restrict grad, const uint8_t* __restrict mask, int64_t i0,
                                             int64_t i1, T scale, T* __restrict grad_x) {
  for (int64_t i = i0; i < i1; ++i) {
    const T value = grad[i] * scale;
    grad_x[i] = mask[i] ? value : T(0);
  }
}

template <class T>
ATTN_SIMD_CLONES void bernoulli_chunk(const T* __restrict probs, int64_t i0, int64_t i1, uint64_t key,
                                      T* __restrict out) {
  // r is below 2^32: probability 0 never fires, probability 1 always does.
  for_each_draw(key, i0, i1, [&](int64_t i, uint32_t draw) {
    out[i] = static_cast<double>(draw) < static_cast<double>(probs[i]) * kTwoTo32 ? T(1) : T(0);
  });
}

template <class F>
void for_each_chunk(int64_t n, const F& f) {
  parallel_for((n + kChunk - 1) / kChunk, 1, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) f(c * kChunk, std::min(n, (c + 1) * kChunk));
  });
}

// Runs f(row start, key, i0, i1) over every chunk [i0, i1) of every row of
// the n elements cut into streams.keys.size() equal rows; i0 and i1 count
// from the row's start, where its stream begins.
template <class F>
void for_each_row_chunk(int64_t n, const NoiseStreams& streams, const F& f) {
  const int64_t rows = static_cast<int64_t>(streams.keys.size());
  if (n == 0 || rows == 0) return;
  const int64_t row_len = n / rows, chunks_per_row = (row_len + kChunk - 1) / kChunk;
  parallel_for(rows * chunks_per_row, 1, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t row = t / chunks_per_row, c = t % chunks_per_row;
      f(row * row_len, streams.keys[static_cast<size_t>(row)], c * kChunk, std::min(row_len, (c + 1) * kChunk));
    }
  });
}

}  // namespace

void dropout_cpu(const Tensor& x, double p, const NoiseStreams& streams, const Tensor& out, const Tensor& mask) {
  dispatch_floating(x.dtype(), "dropout", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* px = x.data<T>();
    T* po = out.data<T>();
    uint8_t* pm = mask.data<uint8_t>();
    const T scale = static_cast<T>(1.0 / (1.0 - p));
    const uint64_t threshold = static_cast<uint64_t>(std::llround(p * kTwoTo32));
    for_each_row_chunk(x.numel(), streams, [&](int64_t row, uint64_t key, int64_t i0, int64_t i1) {
      dropout_chunk(px + row, i0, i1, key, threshold, scale, po + row, pm + row);
    });
  });
}

void dropout_backward_cpu(const Tensor& grad, const Tensor& mask, double scale, const Tensor& grad_x) {
  dispatch_floating(grad.dtype(), "dropout_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* pg = grad.data<T>();
    const uint8_t* pm = mask.data<uint8_t>();
    T* po = grad_x.data<T>();
    const T s = static_cast<T>(scale);
    for_each_chunk(grad.numel(), [&](int64_t i0, int64_t i1) { dropout_backward_chunk(pg, pm, i0, i1, s, po); });
  });
}

void bernoulli_cpu(const Tensor& probs, const NoiseStreams& streams, const Tensor& out) {
  dispatch_floating(probs.dtype(), "bernoulli", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* pp = probs.data<T>();
    T* po = out.data<T>();
    for_each_row_chunk(probs.numel(), streams, [&](int64_t row, uint64_t key, int64_t i0, int64_t i1) {
      bernoulli_chunk(pp + row, i0, i1, key, po + row);
    });
  });
}

}  // namespace attn
