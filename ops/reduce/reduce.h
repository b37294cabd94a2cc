// Reductions along any set of axes, with keepdim.
#pragma once
#include "attn/engine/tensor.h"

namespace attn {

// An empty `axes` list means every axis.
Tensor sum(const Tensor& x, const std::vector<int64_t>& axes = {}, bool keepdim = false);
Tensor mean(const Tensor& x, const std::vector<int64_t>& axes = {}, bool keepdim = false);
// Gradient goes to one argmax per reduced group (the first in row-major order).
Tensor max(const Tensor& x, const std::vector<int64_t>& axes = {}, bool keepdim = false);
// log(sum(exp(x))) without overflow; a group that is all -inf gives -inf, not NaN.
Tensor logsumexp(const Tensor& x, const std::vector<int64_t>& axes = {}, bool keepdim = false);

// Sums a broadcast gradient back to `shape` (the inverse of broadcasting).
Tensor sum_to(const Tensor& x, const Shape& shape);

// The sum of x's squared elements (the squared L2 norm) as a float64 scalar,
// whatever x's dtype: squares formed and summed in double on every device.
// x is cut into rows of 2^16 elements summed in parallel, then the rows'
// sums are added, so the order of the additions depends on x's size only. No gradient (for gradient norms: clip_grad_norm).
Tensor squared_norm(const Tensor& x);

// Index of the maximum along one axis (int64, no gradient).
Tensor argmax(const Tensor& x, int64_t axis, bool keepdim = false);

}  // namespace attn
