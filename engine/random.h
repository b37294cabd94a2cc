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
  uint64_t next_u64();
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
  uint64_t s_[4];
  bool has_spare_normal_ = false;
  double spare_normal_ = 0;
};

// New CPU tensors filled from `gen`.
Tensor rand_uniform(const Shape& shape, double lo, double hi, Generator& gen, DType dtype = DType::F32);
Tensor rand_normal(const Shape& shape, double mean, double stddev, Generator& gen, DType dtype = DType::F32);

}  // namespace attn
