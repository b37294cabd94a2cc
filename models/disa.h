// Masked multi-dimensional self-attention with its fusion gate (DiSA, the
// building block of DiSAN; seed 002 Sec. 2.3, Eq. 9):
//   h = act(W_h x + b_h)
//   f(h_i, h_j) = c * tanh((W1 h_i + W2 h_j + b) / c),  c = 5 by default
//   P_i. = softmax over keys j allowed by the direction mask (the diagonal is
//          always excluded), separately for every feature
//   s_i = sum_j P_ij * h_j   (0 when query i has no valid key)
//   u = F * h + (1 - F) * s, F = sigmoid(W_f1 s + W_f2 h + b_f)   (DiSAN fusion gate)
// Padded outputs are exactly zero. The scores go through the fused kernel
// (O(B n d) memory) unless materialize_scores asks for the [B, n, n, d]
// tensor, which is what made the papers' DiSAN memory-hungry.
// Children: "fc" (W_h, b_h), "w1", "w2" (no biases), parameter "bias" (b),
// "fusion" (the gate).
#pragma once
#include "attn/engine/random.h"
#include "attn/models/masks.h"
#include "attn/nn/activation.h"
#include "attn/nn/fusion_gate.h"
#include "attn/nn/linear.h"

namespace attn {

struct DisaOptions {
  Direction direction = Direction::Forward;
  Activation activation = Activation::Relu;
  double scale_c = 5.0;
  // true: build the [B, n, n, d] score tensor from elementwise ops (the
  // papers' memory profile); false: the fused kernel (ops/multi_dim_attention/multi_dim_attention.h).
  bool materialize_scores = false;
};

class Disa : public Module {
 public:
  Disa(int64_t input_dim, int64_t features, const DisaOptions& options, Generator& gen, DType dtype = DType::F32);
  // x [B, n, input_dim], valid [B, n]; extra_mask [B, n, n] (uint8, 1 = may
  // attend) is and-ed into the direction mask (ReSA's token selection).
  // Returns u [B, n, features].
  Tensor forward(const Tensor& x, const Tensor& valid, const Tensor& extra_mask = Tensor()) const;
  int64_t features() const { return features_; }

 private:
  DisaOptions options_;
  int64_t features_;
  Linear fc_, w1_, w2_;
  Tensor bias_;
  GatedFusion fusion_;
};

// The attention part alone (no input projection, no gate): s = sum_j P_ij h_j
// with f as above, given h and the [B, n, n] mask. Reused by Bi-BloSA and ReSA.
// bias may be undefined when query_term already holds it (the models pass
// linear(h, W1, b): the bias rides on the GEMM's output instead of costing a
// pass of its own over [B, n, d]).
// Fused (ops/multi_dim_attention/multi_dim_attention.h) by default; materialize_scores composes it
// from elementwise ops and a masked softmax over the [B, n, n, d] scores (the
// reference the fused kernel is tested against).
Tensor multi_dim_masked_attention(const Tensor& h, const Tensor& query_term, const Tensor& key_term, const Tensor& bias,
                                  const Tensor& pair_mask, double scale_c, bool materialize_scores = false,
                                  const char* trace_name = "alignment");
// The query and key terms of the attention above, W1 h + b and W2 h, for
// h [B, n, d] and pair_mask [B, n, n]. A query row with no allowed key and
// a key row with no allowed query take part in no pair, so the attention
// never reads them; where those rows are at least kSkippedRowsMinShare of
// a term's rows (ReSA's unselected heads and dependents: about half), the
// term is computed on the other rows only (gathered, multiplied, put back
// with index_add; the skipped rows are 0), which skips their share of the
// products forward and backward. bias may be undefined. (Bi-BloSA's block
// edges and padding are 19% of its intra-block rows; there the gathers and
// the extra saved rows cost what the products saved, and 16 MiB of peak.)
constexpr double kSkippedRowsMinShare = 0.1;
struct ScoreTerms {
  Tensor query, key;
};
ScoreTerms score_terms(const Tensor& h, const Tensor& w1, const Tensor& bias, const Tensor& w2,
                       const Tensor& pair_mask);
// Its probabilities P [B, nq, nk, d] (softmax over keys per feature; 0 at
// masked pairs), materialised: the reference path and the attention trace.
Tensor multi_dim_probabilities(const Tensor& query_term, const Tensor& key_term, const Tensor& bias,
                               const Tensor& pair_mask, double scale_c);

}  // namespace attn
