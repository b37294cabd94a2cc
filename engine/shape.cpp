#include "attn/engine/shape.h"

#include "attn/engine/error.h"

namespace attn {

int64_t numel_of(const Shape& shape) {
  int64_t n = 1;
  bool overflow = false;
  for (int64_t d : shape) {
    if (d == 0) return 0;  // empty, however large the other axes
    overflow = overflow || __builtin_mul_overflow(n, d, &n);
  }
  // A shape read from a file or a config (hidden = 2^62) must not wrap round
  // to a small count and so a buffer too small for what is written into it.
  ATTN_CHECK(!overflow, "shape", "the shape ", shape_str(shape), " has more than 2^63 - 1 elements");
  return n;
}

Shape contiguous_strides(const Shape& shape) {
  Shape strides(shape.size());
  int64_t s = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = s;
    s *= shape[i] > 0 ? shape[i] : 1;
  }
  return strides;
}

int64_t normalize_axis(int64_t axis, int64_t rank, const char* op) {
  int64_t a = axis < 0 ? axis + rank : axis;
  ATTN_CHECK(a >= 0 && a < rank, op, "axis ", axis, " is out of range for a tensor of rank ", rank);
  return a;
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    ATTN_CHECK(da == db || da == 1 || db == 1, op, "shapes ", shape_str(a), " and ", shape_str(b),
               " cannot be broadcast together");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

std::vector<int64_t> broadcast_strides(const Shape& shape, const std::vector<int64_t>& strides,
                                       const Shape& target) {
  std::vector<int64_t> out(target.size(), 0);
  size_t lead = target.size() - shape.size();
  for (size_t i = 0; i < shape.size(); ++i)
    out[lead + i] = (shape[i] == 1 && target[lead + i] != 1) ? 0 : strides[i];
  return out;
}

bool broadcasts_to(const Shape& from, const Shape& to) {
  if (from.size() > to.size()) return false;
  const size_t lead = to.size() - from.size();
  for (size_t a = 0; a < from.size(); ++a)
    if (from[a] != 1 && from[a] != to[lead + a]) return false;
  return true;
}

}  // namespace attn
