// Deterministic random numbers from an explicit, seeded generator. Every
// consumer (init, dropout, sampling) takes a Generator&, so a run is
// reproducible from its seed alone.
#pragma once
#include <array>
#include <cstdint>

#include "attn/engine/tensor.h"

namespace attn {

// xoshiro256** seeded through splitmix64: fast, small state, good quality.
class Generator {
 public:
  explicit Generator(uint64_t seed = 0);
  void seed(uint64_t seed);
  // Inline: dropout and sampling draw one per element or pair of elements.
  uint64_t next_u64() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  double uniform();                     // [0, 1)
  double uniform(double lo, double hi);  // [lo, hi)
  double normal();                      // standard normal (Box-Muller)
  bool bernoulli(double p);
  // A fresh 64-bit seed for a counter-based device generator (CUDA dropout).
  uint64_t derive_seed() { return next_u64(); }

  // The full state, so a resumed run continues the same random stream.
  std::array<uint64_t, 4> state() const;
  void set_state(const std::array<uint64_t, 4>& state);

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
  bool has_spare_normal_ = false;
  double spare_normal_ = 0;
};

// New CPU tensors filled from `gen`.
Tensor rand_uniform(const Shape& shape, double lo, double hi, Generator& gen, DType dtype = DType::F32);
Tensor rand_normal(const Shape& shape, double mean, double stddev, Generator& gen, DType dtype = DType::F32);

}  // namespace attn
