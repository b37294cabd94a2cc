// Source2token's pooling, fused: for every example b and feature f,
//
//   out[b, f] = sum_t p[b, t, f] values[b, t, f],
//   p[b, :, f] = softmax over the valid tokens t of scores[b, :, f]
//
// the multi-dimensional source2token attention (DiSAN's Eq. 15-16; the
// sentence encoders of DiSAN, Bi-BloSAN, ReSAN and MTSA, and Bi-BloSA's
// block summaries). Composed, the softmax runs along the token axis (a
// transposed copy each way), then a product and a sum: about ten passes
// over [B, n, d] forward and backward; fused, one pass each way.
#pragma once
#include "attn/engine/tensor.h"

namespace attn {

// scores, values: [B, n, d] of one floating dtype and device; mask
// (optional): uint8 [B, n], nonzero = a valid token. Returns [B, d].
// Masked tokens take no part, whatever scores and values hold there (NaN
// included), and get gradient exactly 0. An example with no valid token, or
// whose valid scores of a feature are all -inf, gives 0 there and passes no
// gradient; a NaN at a valid token gives NaN. Differentiable in scores and
// values.
Tensor softmax_pool(const Tensor& scores, const Tensor& values, const Tensor& mask = Tensor());

}  // namespace attn
