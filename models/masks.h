// Masks shared by every mechanism. Convention: uint8, 1 = may attend / is
// valid, 0 = masked. Positional masks are query-major: mask[i][j] says
// whether query i may attend to key j.
#pragma once
#include <vector>

#include "attn/engine/tensor.h"

namespace attn {

enum class Direction {
  Forward,   // keys j < i (the past)
  Backward,  // keys j > i (the future)
  None,      // every key but i itself
};

Direction direction_from_name(const std::string& name);  // "forward", "backward", "none"
const char* direction_name(Direction d);

// [n, n] positional mask for a direction; the diagonal is always excluded.
Tensor direction_mask(int64_t n, Direction dir);

// [n, n] mask of |i - j| <= radius (a window that includes the diagonal).
Tensor window_mask(int64_t n, int64_t radius);

// [B, n] length mask: 1 for positions below each example's length.
Tensor length_mask(const std::vector<int64_t>& lengths, int64_t n);

// [B, n, n] = valid[b, i] & valid[b, j] & positional[i, j] (positional may be
// undefined: all pairs). Rows of padded queries are all zero.
Tensor pair_mask(const Tensor& valid, const Tensor& positional);

// x [B, n, d] with padded positions (valid [B, n] == 0) set to exactly 0.
Tensor zero_padded(const Tensor& x, const Tensor& valid);

// Throws unless t is a uint8 [b, n] mask, naming `op` and what t is.
void check_token_mask(const Tensor& t, int64_t b, int64_t n, const char* op, const char* what);

// Elementwise a & b and !a of uint8 masks (broadcasting like any binary op).
Tensor mask_and(const Tensor& a, const Tensor& b);
Tensor mask_not(const Tensor& a);

}  // namespace attn
