// The gates the papers use to merge two or three feature streams.
#pragma once
#include "attn/engine/random.h"
#include "attn/nn/activation.h"
#include "attn/nn/linear.h"

namespace attn {

// DiSAN's fusion gate, also Bi-BloSA's block gate (seed 002, the e = G*o + (1-G)*v step):
//   F = sigmoid(W1 s + W2 h + b),  u = F * h + (1 - F) * s.
// Parameters: "w1.weight", "w2.weight" (no biases), "bias".
class GatedFusion : public Module {
 public:
  GatedFusion(int64_t features, Generator& gen, DType dtype = DType::F32);
  Tensor forward(const Tensor& s, const Tensor& h) const;

 private:
  Linear w1_, w2_;
  Tensor bias_;
};

// ReSA's fusion gate: F = sigmoid(W [x; s] + b),  u = F * x + (1 - F) * s.
// Child: "proj" (2d -> d).
class ConcatGate : public Module {
 public:
  ConcatGate(int64_t features, Generator& gen, DType dtype = DType::F32);
  Tensor forward(const Tensor& x, const Tensor& s) const;
  // F itself (for pictures of the gate): forward computes it inside one op.
  Tensor gate_values(const Tensor& x, const Tensor& s) const;

 private:
  Linear proj_;
};

// Bi-BloSA's feature fusion gate over [x; h; E]:
//   [F; G] = W [x; h; E] + b,  F = act(.),  G = sigmoid(.),  u = G * F + (1 - G) * x.
// Child: "proj" (3d -> 2d; the first d outputs are F's, the last d are G's).
class FeatureFusionGate : public Module {
 public:
  FeatureFusionGate(int64_t features, Activation act, Generator& gen, DType dtype = DType::F32);
  Tensor forward(const Tensor& x, const Tensor& h, const Tensor& e) const;
  // The same gate where E is one vector per block of `block_len` tokens:
  // x, h [B, m * block_len, d], e_blocks [B, m, d], E = each block's row
  // repeated over its tokens. E's third of W is applied to the m block rows
  // and broadcast, not to the m * block_len repeated ones: the same function
  // with a third less GEMM work (its backward sums over a block first).
  Tensor forward_block_context(const Tensor& x, const Tensor& h, const Tensor& e_blocks, int64_t block_len) const;

 private:
  Tensor gate(const Tensor& both, const Tensor& x) const;

  Activation act_;
  int64_t features_;
  Linear proj_;
};

}  // namespace attn
