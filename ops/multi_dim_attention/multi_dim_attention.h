// Fused multi-dimensional (feature-wise) masked attention, the score function
// of DiSA, Bi-BloSA and ReSA (seed 002 Eq. 9, seed 004):
//
//   L[b,i,j,f] = c * tanh((query[b,i,f] + key[b,j,f]) / c)
//   P[b,i,j,f] = softmax over the keys j with mask[b,i,j] != 0 of L[b,i,j,f]
//   out[b,i,f] = sum_j P[b,i,j,f] * values[b,j,f]
//
// Composed from elementwise ops this builds the [B, nq, nk, d] score tensor
// (and several like it for the backward), which is what makes DiSAN need
// gigabytes. The fused kernels never store it: the forward keeps one
// log-normaliser per output element, and the backward recomputes the scores
// from query and key. Memory is O(B n d) instead of O(B n^2 d).
#pragma once
#include "attn/engine/tensor.h"

namespace attn {

// query [B, nq, d]; key and values [B, nk, d]; mask uint8 broadcastable to
// [B, nq, nk] (nonzero = query i may attend to key j); scale_c > 0.
// Returns [B, nq, d]. A query with no valid key gets 0 (and passes no
// gradient). Masked pairs get probability exactly 0. Differentiable in
// query, key and values.
Tensor multi_dim_attention(const Tensor& query, const Tensor& key, const Tensor& values, const Tensor& mask,
                           double scale_c);

}  // namespace attn
