// Shape arithmetic shared by the tensor and every op: element counts,
// contiguous strides, axis normalisation and NumPy broadcasting.
#pragma once
#include <cstdint>
#include <vector>

namespace attn {

using Shape = std::vector<int64_t>;

int64_t numel_of(const Shape& shape);
Shape contiguous_strides(const Shape& shape);

// Maps a possibly negative axis into [0, rank); throws naming `op` when out of range.
int64_t normalize_axis(int64_t axis, int64_t rank, const char* op);

// NumPy broadcast of two shapes; throws naming `op` and both shapes when incompatible.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);
// Whether `from` broadcasts to exactly `to` (trailing axes equal or 1).
bool broadcasts_to(const Shape& from, const Shape& to);

// Strides that read a tensor of `shape`/`strides` as if expanded to `target`
// (broadcast dimensions get stride 0).
std::vector<int64_t> broadcast_strides(const Shape& shape, const std::vector<int64_t>& strides,
                                       const Shape& target);

}  // namespace attn
