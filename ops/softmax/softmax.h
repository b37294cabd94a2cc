// Softmax and log-softmax along one axis, with an optional validity mask.
// Both are fused row kernels: numerically stable (the row max over valid
// entries is subtracted) and safe with masks, so attention can mask with
// -inf or huge values and never see a NaN in the forward or the backward.
#pragma once
#include "attn/engine/tensor.h"

namespace attn {

// softmax(x)_i = exp(x_i) / sum_j exp(x_j) along `axis` (negative counts from
// the end).
//
// mask (optional): uint8, broadcastable to x's shape; nonzero = valid (kept),
// 0 = masked out. Masked entries get probability exactly 0 and gradient 0,
// whatever x holds there (-inf, 1e30, NaN). A row with no valid entry (fully
// masked, or whose valid entries are all -inf) gives all zeros, not NaN, and
// passes no gradient.
//
// The result has x's shape; when `axis` is not the last axis it is a permuted
// view of a buffer laid out with `axis` last.
Tensor softmax(const Tensor& x, int64_t axis, const Tensor& mask = Tensor());

// log(softmax(x)) along `axis`, computed as x - max - log(sum(exp(x - max))).
//
// With a mask: masked entries output 0. These zeros are NOT log-probabilities
// (the true value would be -inf); callers must ignore them, e.g. by applying
// the same mask. Their gradient is 0. A row with no valid entry outputs all 0
// with gradient 0.
Tensor log_softmax(const Tensor& x, int64_t axis, const Tensor& mask = Tensor());

}  // namespace attn
