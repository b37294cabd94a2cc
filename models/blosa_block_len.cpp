#include "attn/models/blosa_block_len.h"

#include <algorithm>
#include <cmath>

#include "attn/engine/error.h"
#include "attn/util/named_values.h"

namespace attn {

namespace {
// The longest sentence the distribution rule accepts, in tokens.
constexpr double kMaxExpectedLength = 1e6;

// Smallest integer r >= 1 with r^3 >= target: ceil(cbrt(target)) without the
// rounding error of std::cbrt at perfect cubes (cbrt(8) must give 2, not 3).
// The search starts just below the floating-point cube root (never above the
// answer, whatever cbrt's last-bit error), so it takes a step or two.
int64_t ceil_cube_root(double target) {
  int64_t r = std::max<int64_t>(1, static_cast<int64_t>(std::cbrt(target)) - 1);
  while (static_cast<double>(r) * static_cast<double>(r) * static_cast<double>(r) < target) ++r;
  return r;
}


const NamedValue<BlockLenMode> kBlockLenModeNames[] = {
    {BlockLenMode::Auto, "auto"}, {BlockLenMode::Fixed, "fixed"}, {BlockLenMode::Distribution, "distribution"}};
}  // namespace

BlockLenMode block_len_mode_from_name(const std::string& name) {
  return value_from_name(kBlockLenModeNames, name, "block_len_mode", "block length mode");
}

const char* block_len_mode_name(BlockLenMode mode) { return name_of_value(kBlockLenModeNames, mode); }

int64_t block_length_auto(int64_t n) {
  ATTN_CHECK(n >= 1, "block_length", "sequence length must be positive, got ", n);
  return ceil_cube_root(2.0 * static_cast<double>(n));
}

int64_t block_length_from_distribution(double mean, double std, int64_t batch) {
  ATTN_CHECK(mean > 0 && std::isfinite(mean), "block_length", "length_mean must be positive, got ", mean);
  ATTN_CHECK(std >= 0 && std::isfinite(std), "block_length", "length_std must be non-negative, got ", std);
  ATTN_CHECK(batch >= 1, "block_length", "batch_for_r must be positive, got ", batch);
  const double longest = std * std::sqrt(2.0 * std::log(static_cast<double>(batch))) + mean;
  // A sentence is at most kMaxExpectedLength tokens: beyond that the rule's
  // block length would be meaningless (and its cube root a huge count).
  ATTN_CHECK(longest <= kMaxExpectedLength, "block_length", "length_mean ", mean, " and length_std ", std,
             " put the longest expected sentence at ", longest, " tokens, above the limit of ", kMaxExpectedLength);
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
