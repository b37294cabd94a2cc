// Masked block self-attention (mBloSA, seed 002 Sec. 3.1) on an input that is
// already projected to `features` (Bi-BloSAN applies its fully connected layer
// first). With x [B, n, d], valid [B, n] and block length r, m = ceil(n / r):
//   blocks:  x zero-padded to m*r tokens and viewed as [B*m, r, d]
//   intra:   h_l = g_m(x_l, M) for every block at once (Eq. 11), the DiSA
//            attention f = c tanh((W1 x_i + W2 x_j + b) / c) under the
//            direction mask inside the block and the token padding mask
//   s2t:     v_l = sum_i P_i * h_i, P = softmax_i(W_s h_i + b_s) over the
//            block's valid tokens (Eq. 12, one layer; an empty block gives 0)
//   inter:   o = g_m(v, M) over the blocks (Eq. 13; empty blocks masked)
//   gate:    G = sigmoid(W(g1) o + W(g2) v + b(g)), e = G * o + (1 - G) * v
//            (Eq. 14-15; GatedFusion(s = v, h = o), so "block_gate.w1" is
//            the paper's W(g2) and "block_gate.w2" its W(g1))
//   fusion:  E = e_l copied to each token of block l,
//            [F; G'] = W_f [x; h; E] + b_f, u = sigmoid(G') * act(F) + (1 - sigmoid(G')) * x
//            (Eq. 16-18, FeatureFusionGate)
// u is sliced back to n tokens and is exactly zero at padded tokens.
// Table 3's "w/o Local" (local_context false) leaves h out of the fusion:
// [F; G'] = W_f [x; E] + b_f (h still makes the block vectors v). "w/o
// Global" (global_context false) leaves E out: no block_s2t, inter-block
// attention or block gate; [F; G'] = W_f [x; h] + b_f. Both use
// OneContextFusionGate (models/blosa_one_context_fusion.h), child "fusion".
// The intra-block attention holds a [B*m, r, r, d] score tensor:
// O(B * n * r * d) memory instead of DiSA's O(B * n^2 * d).
// Children/parameters: "intra_w1", "intra_w2" (no biases), "intra_bias",
// "block_s2t" (one-layer Source2Token: "block_s2t.w"), "inter_w1",
// "inter_w2" (no biases), "inter_bias", "block_gate" (GatedFusion),
// "fusion" (FeatureFusionGate).
#pragma once
#include <memory>

#include "attn/engine/random.h"
#include "attn/models/blosa_one_context_fusion.h"
#include "attn/models/masks.h"
#include "attn/models/source2token.h"
#include "attn/nn/activation.h"
#include "attn/nn/fusion_gate.h"
#include "attn/nn/linear.h"

namespace attn {

struct MBlosaOptions {
  Direction direction = Direction::Forward;
  Activation activation = Activation::Relu;  // sigma of the fusion gate's F
  double scale_c = 5.0;
  // true: build the [B, n, n, d] score tensor from elementwise ops (the
  // papers' memory profile); false: the fused kernel (ops/multi_dim_attention/multi_dim_attention.h).
  bool materialize_scores = false;
  // The context features the fusion gate takes besides x: h (local) and E
  // (global); at least one. false removes it (Table 3 of seed 002).
  bool local_context = true;
  bool global_context = true;
};

// Every intermediate of one pass, for tests and inspection.
struct MBlosaStages {
  int64_t block_len = 0, blocks = 0;  // r and m
  Tensor h;            // [B, m*r, d] intra-block attention output
  // The block stages, undefined without global context:
  Tensor block_valid;  // [B, m] uint8: the block holds a valid token
  Tensor v;            // [B, m, d] block vectors
  Tensor o;            // [B, m, d] inter-block attention output
  Tensor e;            // [B, m, d] block gate output
  Tensor u;            // [B, n, d] mBloSA output, zero at padded tokens
};

class MBlosa : public Module {
 public:
  MBlosa(int64_t features, const MBlosaOptions& options, Generator& gen, DType dtype = DType::F32);
  // x [B, n, features], valid [B, n] uint8, block_len r >= 1 -> u [B, n, features].
  Tensor forward(const Tensor& x, const Tensor& valid, int64_t block_len) const;
  MBlosaStages stages(const Tensor& x, const Tensor& valid, int64_t block_len) const;
  int64_t features() const { return features_; }
  Direction direction() const { return options_.direction; }

 private:
  MBlosaOptions options_;
  int64_t features_;
  Linear intra_w1_, intra_w2_;
  Tensor intra_bias_;
  // Built only with global context:
  std::unique_ptr<Source2Token> block_s2t_;
  std::unique_ptr<Linear> inter_w1_, inter_w2_;
  Tensor inter_bias_;
  std::unique_ptr<GatedFusion> block_gate_;
  // One of the two: [x; h; E] with both contexts, else [x; h] or [x; E].
  std::unique_ptr<FeatureFusionGate> fusion_;
  std::unique_ptr<OneContextFusionGate> one_context_fusion_;
};

}  // namespace attn
