#include "attn/models/masks.h"

#include <cstdlib>
#include <string>

#include "attn/engine/error.h"
#include "attn/ops/binary/binary.h"
#include "attn/ops/view/view.h"
#include "attn/util/named_values.h"

namespace attn {

namespace {
const NamedValue<Direction> kDirectionNames[] = {{Direction::Forward, "forward"}, {Direction::Forward, "fw"},
                                                 {Direction::Backward, "backward"}, {Direction::Backward, "bw"},
                                                 {Direction::None, "none"}};
}  // namespace

Direction direction_from_name(const std::string& name) {
  return value_from_name(kDirectionNames, name, "direction", "direction");
}

const char* direction_name(Direction d) { return name_of_value(kDirectionNames, d); }

Tensor direction_mask(int64_t n, Direction dir) {
  Tensor m = zeros({n, n}, DType::U8);
  uint8_t* p = m.data<uint8_t>();
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j)
      p[i * n + j] = dir == Direction::Forward ? j < i : dir == Direction::Backward ? j > i : j != i;
  return m;
}

Tensor window_mask(int64_t n, int64_t radius) {
  Tensor m = zeros({n, n}, DType::U8);
  uint8_t* p = m.data<uint8_t>();
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) p[i * n + j] = std::llabs(i - j) <= radius;
  return m;
}

Tensor length_mask(const std::vector<int64_t>& lengths, int64_t n) {
  int64_t b = static_cast<int64_t>(lengths.size());
  Tensor m = zeros({b, n}, DType::U8);
  uint8_t* p = m.data<uint8_t>();
  for (int64_t i = 0; i < b; ++i) {
    ATTN_CHECK(lengths[i] >= 0 && lengths[i] <= n, "length_mask", "length ", lengths[i], " of example ", i,
               " is outside [0, ", n, "]");
    for (int64_t j = 0; j < lengths[i]; ++j) p[i * n + j] = 1;
  }
  return m;
}

Tensor pair_mask(const Tensor& valid, const Tensor& positional) {
  ATTN_CHECK(valid.dtype() == DType::U8 && valid.dim() == 2, "pair_mask", "valid must be uint8 [B, n], got ",
             dtype_name(valid.dtype()), " ", shape_str(valid.shape()));
  Tensor both = mask_and(unsqueeze(valid, 2), unsqueeze(valid, 1));
  if (!positional.defined()) return both;
  ATTN_CHECK(positional.dim() == 2 && positional.size(0) == valid.size(1) && positional.size(1) == valid.size(1),
             "pair_mask", "positional mask ", shape_str(positional.shape()), " does not fit valid ",
             shape_str(valid.shape()));
  // Positional masks are built on the host; they follow valid to its device.
  const Tensor pos = positional.device() == valid.device() ? positional : positional.to(valid.device());
  return mask_and(both, expand(pos, {valid.size(0), valid.size(1), valid.size(1)}));
}

Tensor zero_padded(const Tensor& x, const Tensor& valid) {
  return masked_fill(x, mask_not(unsqueeze(valid, -1)), 0.0);
}

void check_token_mask(const Tensor& t, int64_t b, int64_t n, const char* op, const char* what) {
  ATTN_CHECK(t.dtype() == DType::U8 && t.dim() == 2 && t.size(0) == b && t.size(1) == n, op, what,
             " must be uint8 [", b, ", ", n, "], got ", dtype_name(t.dtype()), " ", shape_str(t.shape()));
}

Tensor mask_and(const Tensor& a, const Tensor& b) { return where(a, b, zeros({}, DType::U8, a.device())); }

Tensor mask_not(const Tensor& a) { return eq(a, zeros({}, DType::U8, a.device())); }

}  // namespace attn
