// A linear-chain CRF layer over per-token tag scores (seed 003 Table 4
// "+ CRF"; the op and its equations: ops/crf/crf.h).
// Parameters: "transitions" [K, K] (row: the previous tag), "start" [K],
// "end" [K]. Initialised as Lample et al. (2016)'s tagger does: their
// transition matrix is (K + 2) x (K + 2), the two extra states being the
// sentence's start and end, drawn Glorot-uniform; here the three parts of
// that matrix are each drawn U(-a, a) with a = sqrt(6 / (2 (K + 2))).
#pragma once
#include "attn/engine/random.h"
#include "attn/nn/module.h"

namespace attn {

class Crf : public Module {
 public:
  Crf(int64_t tags, Generator& gen, DType dtype = DType::F32);

  // Per-sentence negative log-likelihood [B] of the gold tags [B, n] under
  // emissions [B, n, K] and the prefix mask [B, n] (0 for an empty sentence).
  Tensor nll(const Tensor& emissions, const Tensor& tags, const Tensor& mask) const;
  // The Viterbi path int64 [B, n], -1 at padding; no gradient.
  Tensor decode(const Tensor& emissions, const Tensor& mask) const;

  int64_t tags() const { return transitions.size(0); }

  Tensor transitions;
  Tensor start;
  Tensor end;
};

}  // namespace attn
