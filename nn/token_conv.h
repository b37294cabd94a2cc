// A convolution layer over the token axis (ops/token_conv/token_conv.h):
// weight [k, in, out] Glorot-uniform with the fans of a convolution (in k,
// out k), bias [out] zero. Parameters: "weight", "bias".
#pragma once
#include "attn/engine/random.h"
#include "attn/nn/module.h"
#include "attn/ops/unary/unary_activation.h"

namespace attn {

class TokenConv : public Module {
 public:
  TokenConv(int64_t width, int64_t in_features, int64_t out_features, Generator& gen, DType dtype = DType::F32);
  // x [B, n, in], mask [B, n] uint8 -> [B, n, out], exactly 0 at padded tokens.
  Tensor forward(const Tensor& x, const Tensor& mask, Activation act = Activation::None) const;

  Tensor weight;
  Tensor bias;
};

}  // namespace attn
