// CPU kernels of the dropout family. Every element draws from the stateless
// stream of ops/dropout_stream.h, so chunks run on any thread in any order
// and the mask equals the CUDA kernel's for the same seed. The per-chunk
// loops are SIMD clones: the draw is integer arithmetic on the index alone,
// so AVX-512 runs eight 64-bit mixes at once.
#include "attn/ops/dropout_kernels.h"

#include <cmath>

#include "attn/engine/cpu_loops.h"
#include "attn/engine/parallel.h"
#include "attn/ops/dropout_stream.h"
#include "attn/ops/vector_math.h"

namespace attn {

namespace {

using dropout_stream::draw_u32;
using dropout_stream::kTwoTo32;
using dropout_stream::stream_key;

constexpr int64_t kChunk = 1 << 14;  // elements per parallel task

template <class T>
ATTN_SIMD_CLONES void dropout_chunk(const T* __restrict x, int64_t i0, int64_t i1, uint64_t key, uint64_t threshold,
                                    T scale, T* __restrict out, uint8_t* __restrict mask) {
  for (int64_t i = i0; i < i1; ++i) {
    // Branch-free: a random keep/drop branch mispredicts at the drop rate.
    const bool keep = static_cast<uint64_t>(draw_u32(key, i)) >= threshold;
    mask[i] = static_cast<uint8_t>(keep);
    out[i] = keep ? x[i] * scale : T(0);
  }
}

template <class T>
ATTN_SIMD_CLONES void bernoulli_chunk(const T* __restrict probs, int64_t i0, int64_t i1, uint64_t key,
                                      T* __restrict out) {
  // r is below 2^32: probability 0 never fires, probability 1 always does.
  for (int64_t i = i0; i < i1; ++i)
    out[i] = static_cast<double>(draw_u32(key, i)) < static_cast<double>(probs[i]) * kTwoTo32 ? T(1) : T(0);
}

template <class F>
void for_each_chunk(int64_t n, const F& f) {
  parallel_for((n + kChunk - 1) / kChunk, 1, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) f(c * kChunk, std::min(n, (c + 1) * kChunk));
  });
}

}  // namespace

void dropout_cpu(const Tensor& x, double p, uint64_t seed, const Tensor& out, const Tensor& mask) {
  dispatch_floating(x.dtype(), "dropout", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* px = x.data<T>();
    T* po = out.data<T>();
    uint8_t* pm = mask.data<uint8_t>();
    const T scale = static_cast<T>(1.0 / (1.0 - p));
    const uint64_t threshold = static_cast<uint64_t>(std::llround(p * kTwoTo32));
    const uint64_t key = stream_key(seed);
    for_each_chunk(x.numel(), [&](int64_t i0, int64_t i1) { dropout_chunk(px, i0, i1, key, threshold, scale, po, pm); });
  });
}

void bernoulli_cpu(const Tensor& probs, uint64_t seed, const Tensor& out) {
  dispatch_floating(probs.dtype(), "bernoulli", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* pp = probs.data<T>();
    T* po = out.data<T>();
    const uint64_t key = stream_key(seed);
    for_each_chunk(probs.numel(), [&](int64_t i0, int64_t i1) { bernoulli_chunk(pp, i0, i1, key, po); });
  });
}

}  // namespace attn
