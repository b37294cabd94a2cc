// Fused attention with a separable tensorized score, the exact form of MTSA's
// Eqs. 10-12 (seeds 000/001):
//
//   f[g,j,i,l] = a[g,j,i] + s[g,i,l]        (token2token + source2token)
//   P[g,j,i,l] = softmax over the keys i with allowed[g,j,i] != 0 of f
//   out[g,j,l] = sum_i P[g,j,i,l] * w[g,j,i,l] * v[g,i,l]
//
// with w = keep_pairs[g,j,i] * keep_features[g,i,l] (attention dropout's
// scaled keep masks, each optional; 1 when undefined). Each (g, j, l) is its
// own softmax, shifted by its own maximum over the keys query j may attend,
// so no allowed term underflows relative to the largest one whatever the
// spread of the scores. Algorithm 1's two-GEMM form shifts source2token
// scores per feature only and loses this when the spread passes the dtype's
// exp range; models/mtsa_attention.cpp falls back to this op then.
// Memory is O(G n d); time O(G nq nk d) exponentials.
#pragma once
#include "attn/engine/tensor.h"

namespace attn {

// a [G, nq, nk]; s, v [G, nk, d]; allowed uint8 broadcastable to [G, nq, nk];
// keep_pairs [G, nq, nk] and keep_features [G, nk, d] or undefined.
// Returns [G, nq, d]; a query with no allowed key gets 0 and passes no
// gradient. Differentiable in a, s and v (the keep masks are constants).
Tensor separable_attention(const Tensor& a, const Tensor& s, const Tensor& v, const Tensor& allowed,
                           const Tensor& keep_pairs = Tensor(), const Tensor& keep_features = Tensor());

}  // namespace attn
