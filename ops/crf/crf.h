// The linear-chain conditional random field over per-token tag scores (seed
// 003 Table 4 "+ CRF"; Lample et al. 2016, Ma and Hovy 2016). With
// emissions e [B, n, K], transitions A [K, K] (A(i, j): tag i followed by
// tag j) and start, end [K], a tag path y of a sentence of L valid tokens
// scores
//   s(y) = start(y_0) + sum_t e_t(y_t) + sum_{t>0} A(y_{t-1}, y_t) + end(y_{L-1})
// and has probability exp(s(y)) / Z, Z the sum over all K^L paths.
//
// mask: uint8 [B, n], a prefix mask (each sentence's valid tokens first), or
// undefined for every token valid. A sentence without valid tokens has NLL 0
// and no gradient. Tags at padded positions are never read.
#pragma once
#include "attn/engine/tensor.h"

namespace attn {

// Per-sentence negative log-likelihood [B]: log Z - s(gold tags), by the
// forward algorithm in log space (in float64 whatever the dtype, so a
// float32 sentence of thousands of tokens keeps its per-token terms).
// Gradients go to emissions, transitions, start and end: the forward-backward
// marginals minus the gold path's indicators (for the transitions: expected
// minus observed transition counts). tags: int64 [B, n], each valid one in
// [0, K). Throws naming the shape, dtype or tag that is wrong.
Tensor crf_nll(const Tensor& emissions, const Tensor& tags, const Tensor& mask, const Tensor& transitions,
               const Tensor& start, const Tensor& end);

// The highest-scoring tag path of each sentence (Viterbi), int64 [B, n] with
// -1 at padded positions; among equal scores the lowest tag index wins. No
// gradient.
Tensor crf_viterbi(const Tensor& emissions, const Tensor& mask, const Tensor& transitions, const Tensor& start,
                   const Tensor& end);

}  // namespace attn
