// Multi-dimensional source2token self-attention (DiSAN, seed 001's s2t):
//   f(x_i) = W2 act(W1 x_i + b1) + b2   (two-layer, the default), or
//   f(x_i) = W x_i + b                  (one-layer, inside Bi-BloSA blocks);
// P = softmax over positions i, separately for every feature, padded
// positions masked; output s = sum_i P_i * x_i.
// With multi_dim false the last layer gives one score per token instead,
// shared by all features: vanilla additive attention without q (seed 002
// Eq. 5 without W(2) q), f(x_i) = w^T act(W1 x_i + b1) + b (Bi-BloSAN's
// Table 3 row "w/o mBloSA & source2token self-attn.").
// A sequence with no valid position outputs zeros.
// Children: "w1", "w2" (two-layer) or "w" (one-layer).
#pragma once
#include <memory>

#include "attn/engine/random.h"
#include "attn/nn/activation.h"
#include "attn/nn/linear.h"

namespace attn {

class Source2Token : public Module {
 public:
  Source2Token(int64_t features, Generator& gen, Activation act = Activation::Relu, bool two_layer = true,
               DType dtype = DType::F32, bool multi_dim = true);
  // x [B, n, d], mask [B, n] uint8 (1 = valid) -> [B, d].
  Tensor forward(const Tensor& x, const Tensor& mask) const;
  // The attention probabilities P [B, n, d] (zeros at padded positions).
  Tensor probabilities(const Tensor& x, const Tensor& mask) const;

 private:
  Tensor scores(const Tensor& x, const Tensor& mask) const;  // f(x_i) [B, n, d] (a scalar score broadcast)

  Activation act_;
  bool two_layer_;
  std::unique_ptr<Linear> w1_, w2_;
};

}  // namespace attn
