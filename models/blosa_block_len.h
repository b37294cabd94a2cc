// How Bi-BloSA picks its block length r (seed 002, Appendix A). The memory of
// mBloSA is dominated by its masked self-attentions: m blocks of r tokens plus
// one attention over m = n / r blocks, xi ~ r^2 * (n / r) + (n / r)^2, which is
// smallest at r = cbrt(2n). For a data set whose lengths follow N(mu, sigma^2)
// and batches of B sentences, n is replaced by the bound on the expected
// longest sentence of a batch, sigma * sqrt(2 ln B) + mu.
#pragma once
#include <cstdint>
#include <string>

namespace attn {

enum class BlockLenMode {
  Auto,          // r = ceil(cbrt(2n)) for every batch, n = the batch's padded length
  Fixed,         // r given by the user
  Distribution,  // r = ceil(cbrt(2 (sigma sqrt(2 ln B) + mu))), fixed at build time
};

BlockLenMode block_len_mode_from_name(const std::string& name);  // "auto", "fixed", "distribution"
const char* block_len_mode_name(BlockLenMode mode);

// ceil(cbrt(2n)), computed exactly as the smallest integer r with r^3 >= 2n.
int64_t block_length_auto(int64_t n);

// ceil(cbrt(2 (std * sqrt(2 ln batch) + mean))); mean > 0, std >= 0, batch >= 1.
int64_t block_length_from_distribution(double mean, double std, int64_t batch);

// The rule an encoder keeps: which mode, and r itself for the fixed modes.
struct BlockLenRule {
  BlockLenMode mode = BlockLenMode::Auto;
  int64_t fixed = 0;  // r for Fixed and Distribution

  static BlockLenRule automatic();
  static BlockLenRule fixed_length(int64_t r);
  static BlockLenRule distribution(double mean, double std, int64_t batch);

  // r for a batch padded to n tokens.
  int64_t for_length(int64_t n) const;
};

}  // namespace attn
