#include "attn/engine/random.h"

#include <cmath>

namespace attn {

namespace {
uint64_t splitmix64(uint64_t& x) {
  uint64_t z = (x += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}
}  // namespace

Generator::Generator(uint64_t seed) { this->seed(seed); }

void Generator::seed(uint64_t seed) {
  for (auto& s : s_) s = splitmix64(seed);
  has_spare_normal_ = false;
}

std::array<uint64_t, 4> Generator::state() const { return {s_[0], s_[1], s_[2], s_[3]}; }

void Generator::set_state(const std::array<uint64_t, 4>& state) {
  for (int i = 0; i < 4; ++i) s_[i] = state[i];
  has_spare_normal_ = false;
}

double Generator::uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

double Generator::uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }

double Generator::normal() {
  if (has_spare_normal_) {
    has_spare_normal_ = false;
    return spare_normal_;
  }
  double u1 = 0;
  while (u1 <= 0) u1 = uniform();
  double u2 = uniform();
  double r = std::sqrt(-2.0 * std::log(u1));
  spare_normal_ = r * std::sin(2 * M_PI * u2);
  has_spare_normal_ = true;
  return r * std::cos(2 * M_PI * u2);
}

bool Generator::bernoulli(double p) { return uniform() < p; }

Tensor rand_uniform(const Shape& shape, double lo, double hi, Generator& gen, DType dtype) {
  Tensor t = empty(shape, dtype);
  for (int64_t i = 0, n = t.numel(); i < n; ++i) write_element(t, i, gen.uniform(lo, hi));
  return t;
}

Tensor rand_normal(const Shape& shape, double mean, double stddev, Generator& gen, DType dtype) {
  Tensor t = empty(shape, dtype);
  for (int64_t i = 0, n = t.numel(); i < n; ++i) write_element(t, i, mean + stddev * gen.normal());
  return t;
}

}  // namespace attn
