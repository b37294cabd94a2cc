// CPU kernels of the dropout family. The elements are cut into fixed blocks,
// each with its own Generator seeded from (seed, block index): blocks can run
// on any thread in any order and still draw exactly the same numbers.
#include "attn/ops/dropout_kernels.h"

#include <cmath>

#include "attn/engine/cpu_loops.h"
#include "attn/engine/random.h"

namespace attn {

namespace {

constexpr int64_t kRandomBlock = 1 << 14;  // elements per independent random stream

// A well-mixed seed per block (a 64-bit finaliser over seed and block index),
// so neighbouring blocks' streams are unrelated.
uint64_t block_seed(uint64_t seed, int64_t block) {
  uint64_t z = seed + static_cast<uint64_t>(block + 1) * 0xD1B54A32D192ED03ULL;
  z = (z ^ (z >> 33)) * 0xFF51AFD7ED558CCDULL;
  z = (z ^ (z >> 33)) * 0xC4CEB9FE1A85EC53ULL;
  return z ^ (z >> 33);
}

// f(i, r) for every i in [0, n) with r a uniform 32-bit draw. Each 64-bit
// draw serves two elements; 32 bits resolve a probability to 2^-32, far
// below any sampling noise, at half the generator calls.
template <class F>
void for_each_random_u32(int64_t n, uint64_t seed, const F& f) {
  const int64_t blocks = (n + kRandomBlock - 1) / kRandomBlock;
  parallel_for(blocks, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      Generator gen(block_seed(seed, b));
      const int64_t end = std::min(n, (b + 1) * kRandomBlock);
      int64_t i = b * kRandomBlock;
      for (; i + 2 <= end; i += 2) {
        const uint64_t r = gen.next_u64();
        f(i, static_cast<uint32_t>(r));
        f(i + 1, static_cast<uint32_t>(r >> 32));
      }
      if (i < end) f(i, static_cast<uint32_t>(gen.next_u64()));
    }
  });
}

constexpr double kTwoTo32 = 4294967296.0;

}  // namespace

void dropout_cpu(const Tensor& x, double p, uint64_t seed, const Tensor& out, const Tensor& mask) {
  dispatch_floating(x.dtype(), "dropout", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* px = x.data<T>();
    T* po = out.data<T>();
    uint8_t* pm = mask.data<uint8_t>();
    const T scale = static_cast<T>(1.0 / (1.0 - p));
    // r < threshold (probability p) drops the element.
    const uint64_t threshold = static_cast<uint64_t>(std::llround(p * kTwoTo32));
    for_each_random_u32(x.numel(), seed, [&](int64_t i, uint32_t r) {
      // Branch-free: a random keep/drop branch mispredicts at the drop rate.
      const bool keep = r >= threshold;
      const T kept = px[i] * scale;
      pm[i] = static_cast<uint8_t>(keep);
      po[i] = keep ? kept : T(0);
    });
  });
}

void bernoulli_cpu(const Tensor& probs, uint64_t seed, const Tensor& out) {
  dispatch_floating(probs.dtype(), "bernoulli", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* pp = probs.data<T>();
    T* po = out.data<T>();
    // r is below 2^32: probability 0 never fires, probability 1 always does.
    for_each_random_u32(probs.numel(), seed, [&](int64_t i, uint32_t r) {
      po[i] = static_cast<double>(r) < static_cast<double>(pp[i]) * kTwoTo32 ? T(1) : T(0);
    });
  });
}

}  // namespace attn
