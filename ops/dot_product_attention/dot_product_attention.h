// Fused multi-head scaled dot-product attention with a key mask, the
// attention of the Transformer baseline (models/multi_head.h). For q
// [B, h, nq, d], k and v [B, h, nk, d] and key_valid uint8 [B, nk]:
//
//   s[j,i] = scale * q[j] . k[i]
//   P[j,i] = softmax over the valid keys i of s[j,.]   (0 at the others)
//   out[j] = sum_i P[j,i] v[i]
//
// Each row is shifted by its own maximum over the valid keys; keys that are
// not valid are skipped, never weighted by zero, so whatever a padded key or
// value row holds (NaN included) cannot reach a result. A query with no valid
// key gets out = 0, P = 0 and passes no gradient.
//
// q, k and v may be any views whose feature axis is contiguous (the
// split_heads views of a [B, n, h * d] projection are read in place), and
// out and the input gradients are [B, h, n, d] tensors laid out in
// [B, n, h, d] order, so merging the heads back is a view, not a copy.
//
// One kernel per direction on each device: the products of one (example,
// head) are 64 x 64 x 30 at the Transformer's default size, where a GEMM
// call costs more than its arithmetic, and the composed form also
// materialises the scores and copies the heads apart and back together.
#pragma once
#include "attn/ops/dot_product_attention/dot_product_attention_fused.h"

namespace attn {

// out [B, h, nq, d]; probabilities [B, h, nq, nk]: P above.
using DotProductAttention = FusedAttention;

DotProductAttention dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& key_valid,
                                          double scale);

// The same function composed of matmul and the masked softmax: the
// reference the fused kernels are tested against.
DotProductAttention dot_product_attention_composed(const Tensor& q, const Tensor& k, const Tensor& v,
                                                   const Tensor& key_valid, double scale);

// The same attention in causal order, the decoder's self-attention: the nq
// queries are the last nq positions of the nk keys' sequence, and query j
// attends the valid keys i <= j + nk - nq (nq = nk: keys up to its own
// position; nq = 1: the newest position, every key). nq <= nk.
DotProductAttention causal_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                                 const Tensor& key_valid, double scale);
DotProductAttention causal_dot_product_attention_composed(const Tensor& q, const Tensor& k, const Tensor& v,
                                                          const Tensor& key_valid, double scale);

}  // namespace attn
