// Bi-BloSA's feature fusion gate (seed 002, Eq. 16-18) with one of its two
// context inputs removed, for Table 3's "w/o Local" (no h) and "w/o Global"
// (no E) rows:
//   [F; G] = W [x; c] + b,  F = act(.),  G = sigmoid(.),  u = G * F + (1 - G) * x
// with c = h (per token) or c = E (one vector per block, repeated over the
// block's tokens). Child: "proj" (2d -> 2d; the first d outputs are F's, the
// last d are G's), named as FeatureFusionGate's (nn/fusion_gate.h).
#pragma once
#include "attn/engine/random.h"
#include "attn/nn/activation.h"
#include "attn/nn/linear.h"

namespace attn {

class OneContextFusionGate : public Module {
 public:
  OneContextFusionGate(int64_t features, Activation act, Generator& gen, DType dtype = DType::F32);
  // c per token: x, c [B, n, d] -> [B, n, d].
  Tensor forward(const Tensor& x, const Tensor& c) const;
  // c per block: x [B, m * block_len, d], c_blocks [B, m, d]. c's half of W
  // is applied to the m block rows and broadcast over each block's tokens.
  Tensor forward_block_context(const Tensor& x, const Tensor& c_blocks, int64_t block_len) const;

 private:
  Activation act_;
  int64_t features_;
  Linear proj_;
};

}  // namespace attn
