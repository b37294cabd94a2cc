// Joining and splitting tensors along one axis. No kernels of their own: the
// outputs are fresh tensors filled with copy_into through narrow() views, so
// they work on every device that has a copy kernel, and every backward is a
// narrow() of the incoming gradient.
#pragma once
#include <vector>

#include "attn/engine/tensor.h"

namespace attn {

// Joins tensors of equal dtype, device and rank whose sizes agree on every
// axis except `axis`. Inputs may be non-contiguous.
Tensor concat(const std::vector<Tensor>& xs, int64_t axis);

// Joins tensors of identical shape along a new axis (output rank = rank + 1).
Tensor stack(const std::vector<Tensor>& xs, int64_t axis);

// Views of consecutive pieces of x along axis; `sizes` must sum to the axis size.
std::vector<Tensor> split(const Tensor& x, const std::vector<int64_t>& sizes, int64_t axis);
// `parts` equal views along axis; parts must divide the axis size.
std::vector<Tensor> chunk(const Tensor& x, int64_t parts, int64_t axis);

// Adds `before` and `after` elements of `value` at the two ends of axis.
Tensor pad(const Tensor& x, int64_t axis, int64_t before, int64_t after, double value = 0.0);

}  // namespace attn
