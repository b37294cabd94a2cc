// A linear map of tokens plus a second one of the tokens scaled feature-wise
// by a per-sentence vector:
//
//   out[b, i, :] = W x[b, i, :] + V (x[b, i, :] * s[b, :])
//
// ReSAN's selection network (seed 004, Eq. 10's hidden layer over
// [x_i; x̄; x_i ⊙ x̄]) applies W and V this way. Since
// V (x ⊙ s_b) = (V diag(s_b)) x, each sentence's map is one matrix
// M_b = W + V diag(s_b), and out_b = x_b M_b^T is one product per sentence
// instead of two per token: half the multiply-adds once a sentence has more
// tokens than it takes to build M_b (d * h multiply-adds). M_b lives in a
// per-thread buffer on the CPU, so the [B, h, d] stack is never materialised
// there; the backward reads the per-sentence G_b = dout_b^T x_b once for
// W's, V's and s's gradients.
#pragma once
#include "attn/engine/tensor.h"

namespace attn {

// x [B, n, d], scale [B, d], weight and scaled_weight [h, d] (a linear
// layer's out x in layout), one floating dtype and device. Returns
// [B, n, h]. Differentiable in all four.
Tensor modulated_linear(const Tensor& x, const Tensor& scale, const Tensor& weight, const Tensor& scaled_weight);

}  // namespace attn
