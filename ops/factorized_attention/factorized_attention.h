// MTSA's tensorized self-attention in Algorithm 1's two-GEMM form (seeds
// 000/001, Eqs. 10-12 and Steps 3-7), fused into one autograd node:
//
//   E[b,c,j,i] = sigma_t-weight of (q k^T)[b,c,j,i] / sqrt(d)   where allowed, else 0
//   F[b,c,i,l] = sigma_s-weight of s[b,c,i,l]                  on real keys, else 0
//   out[b,c,j,l] = (sum_i E F v) / (sum_i E F)                 0 for a query with no allowed key
//
// allowed[b,c,j,i] = positional[c,j,i] && valid[b,j] && valid[b,i]. The
// weights are exp(sigma(x)): sigmoid(x) for sigma = log-sigmoid, exp(x - max)
// for the identity (max over the allowed keys of the row for E, over the
// real keys of the feature for F: shifts that cancel in the ratio).
//
// Two GEMMs do the work of n^2 d scores: E @ [F | v F] gives the
// denominator and numerator at once. The elementwise steps around them are
// one pass each (ops/factorized_attention/factorized_attention_kernels.h) instead of the ~30
// masked selects, products and copies of the composed form, whose backward
// doubles them; the backward is two more GEMMs of the same shape plus the
// two for q and k. The composed form (models/mtsa_attention.cpp) stays as
// the reference, and as the path for attention dropout and tracing.
//
// Exactness: the quotient is exact to rounding while every query with an
// allowed key has each feature's denominator >= kMinDenominator. `exact` is
// false otherwise (source2token scores spread beyond the dtype's exp range),
// and the caller must use the per-softmax form (ops/separable_attention/separable_attention.h).
#pragma once
#include "attn/engine/tensor.h"

namespace attn {

struct FactorizedAttention {
  Tensor out;         // [B, h, n, d]
  bool exact = true;  // false: discard out, use separable_attention
};

// The smallest denominator the quotient may divide by. Above it, terms that
// underflowed change it by at most n * 2^-126 (float32), a relative error
// below 2^-42 for n < 2^20; the backward's grad / den stays below 2^64 |grad|.
constexpr double kMinDenominator = 0x1p-64;

// q, k, v, s: floating [B, h, n, d] (any strides); positional uint8 [h, n, n];
// valid uint8 [B, n]. sigmoid_t / sigmoid_s pick log-sigmoid (true) or the
// identity (false) as sigma_t / sigma_s. Differentiable in q, k, v and s;
// padded rows of every operand are selected out, so NaN or Inf there never
// reaches a real token, forward or backward.
FactorizedAttention factorized_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& s,
                                         const Tensor& positional, const Tensor& valid, bool sigmoid_t,
                                         bool sigmoid_s);

}  // namespace attn
