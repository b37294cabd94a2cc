#include "attn/models/blosa_block_len.h"

#include <cmath>

#include "attn/engine/error.h"

namespace attn {

namespace {
// Smallest integer r >= 1 with r^3 >= target: ceil(cbrt(target)) without the
// rounding error of std::cbrt at perfect cubes (cbrt(8) must give 2, not 3).
int64_t ceil_cube_root(double target) {
  int64_t r = 1;
  while (static_cast<double>(r) * static_cast<double>(r) * static_cast<double>(r) < target) ++r;
  return r;
}
}  // namespace

BlockLenMode block_len_mode_from_name(const std::string& name) {
  if (name == "auto") return BlockLenMode::Auto;
  if (name == "fixed") return BlockLenMode::Fixed;
  if (name == "distribution") return BlockLenMode::Distribution;
  ATTN_CHECK(false, "block_len_mode", "unknown block length mode '", name, "' (known: auto, fixed, distribution)");
  return BlockLenMode::Auto;
}

const char* block_len_mode_name(BlockLenMode mode) {
  switch (mode) {
    case BlockLenMode::Auto: return "auto";
    case BlockLenMode::Fixed: return "fixed";
    case BlockLenMode::Distribution: return "distribution";
  }
  return "?";
}

int64_t block_length_auto(int64_t n) {
  ATTN_CHECK(n >= 1, "block_length", "sequence length must be positive, got ", n);
  return ceil_cube_root(2.0 * static_cast<double>(n));
}

int64_t block_length_from_distribution(double mean, double std, int64_t batch) {
  ATTN_CHECK(mean > 0 && std::isfinite(mean), "block_length", "length_mean must be positive, got ", mean);
  ATTN_CHECK(std >= 0 && std::isfinite(std), "block_length", "length_std must be non-negative, got ", std);
  ATTN_CHECK(batch >= 1, "block_length", "batch_for_r must be positive, got ", batch);
  const double longest = std * std::sqrt(2.0 * std::log(static_cast<double>(batch))) + mean;
  return ceil_cube_root(2.0 * longest);
}

BlockLenRule BlockLenRule::automatic() { return BlockLenRule{}; }

BlockLenRule BlockLenRule::fixed_length(int64_t r) {
  ATTN_CHECK(r >= 1, "block_length", "block_len must be positive, got ", r);
  return BlockLenRule{BlockLenMode::Fixed, r};
}

BlockLenRule BlockLenRule::distribution(double mean, double std, int64_t batch) {
  return BlockLenRule{BlockLenMode::Distribution, block_length_from_distribution(mean, std, batch)};
}

int64_t BlockLenRule::for_length(int64_t n) const {
  if (mode == BlockLenMode::Auto) return block_length_auto(n);
  ATTN_CHECK(fixed >= 1, "block_length", "the ", block_len_mode_name(mode), " block length is not set");
  return fixed;
}

}  // namespace attn
