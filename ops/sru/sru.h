// The simple recurrent unit (SRU, Lei & Zhang 2017, "Training RNNs as Fast as
// CNNs"), run over every sentence of a batch in one direction, over exactly
// its valid tokens.
//
// The 2017 form, as the Bi-BloSAN authors' SRUCell computes it
// (taoshen58/BiBloSA, context_fusion/SRU.py): per token t, with u_t the
// token's three projected blocks [x~_t | a^f_t | a^r_t] and x_t its highway
// input,
//
//     f_t = sigmoid(a^f_t + b_f)
//     r_t = sigmoid(a^r_t + b_r)
//     c_t = f_t * c_{t-1} + (1 - f_t) * x~_t            (c_{-1} = 0)
//     h_t = r_t * tanh(c_t) + (1 - r_t) * x_t
//
// Nothing in a step reads h_{t-1}: the only recurrence is the elementwise
// one of c, so the caller makes every token's projection u = x W [B, n, 3h]
// in one GEMM before the op, and the op is one loop over time per
// (sentence, unit). The highway input is the caller's too: the token itself
// when its width is h, or a fourth projected block (narrow of a [B, n, 4h]
// GEMM) when it is not.
//
// Lengths are exact: the mask must be a prefix mask. Sentence b's forward
// direction stops at its length; in reverse the op reads its valid tokens
// last to first, never the padding. Padded outputs are exactly 0, padded
// inputs are never read (NaN there changes nothing, in either pass), and
// their gradients are exactly 0.
//
// Backward through time keeps only c_t [B, n, h]; f and r are recomputed from
// u and the biases (two sigmoids are cheaper than storing 2h per token).
#pragma once
#include "attn/engine/tensor.h"

namespace attn {

// u [B, n, 3h]: blocks x~, a^f, a^r (that order, as the authors' split).
// highway [B, n, h]: x_t. bias [2h]: b_f then b_r, or undefined for none.
// mask: uint8 [B, n] prefix mask, or undefined for every token valid.
// Returns h [B, n, h]. Differentiable in u, highway and bias.
Tensor sru_sequence(const Tensor& u, const Tensor& highway, const Tensor& bias, const Tensor& mask, bool reverse);

}  // namespace attn
