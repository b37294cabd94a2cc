#include "attn/nn/fusion_gate.h"

#include "attn/engine/error.h"
#include "attn/ops/binary/binary.h"
#include "attn/ops/join/join.h"
#include "attn/ops/matmul/matmul.h"
#include "attn/ops/sigmoid_gate/sigmoid_gate.h"
#include "attn/ops/unary/unary.h"
#include "attn/ops/view/view.h"

namespace attn {

GatedFusion::GatedFusion(int64_t features, Generator& gen, DType dtype)
    : w1_(features, features, gen, false, dtype), w2_(features, features, gen, false, dtype) {
  register_module("w1", w1_);
  register_module("w2", w2_);
  bias_ = register_parameter("bias", zeros({features}, dtype));
}

Tensor GatedFusion::forward(const Tensor& s, const Tensor& h) const {
  // W1 s + W2 h + b as one layer over [s | h] with weight [W1 | W2]: no
  // concatenation and no pass to add the two products.
  return sigmoid_gate(linear(Concat({s, h}), Concat({w1_.weight, w2_.weight}), bias_), h, s);
}

ConcatGate::ConcatGate(int64_t features, Generator& gen, DType dtype)
    : proj_(2 * features, features, gen, true, dtype) {
  register_module("proj", proj_);
}

Tensor ConcatGate::forward(const Tensor& x, const Tensor& s) const {
  // W [x; s] over the two inputs as given: no [.., 2d] concatenation
  // forward, and x's and s's gradients come out as tensors of their own
  // rather than strided halves of one.
  const int64_t d = x.size(-1);
  ATTN_CHECK(2 * d == proj_.weight.size(1) && s.shape() == x.shape(), "ConcatGate", "expects x and s of shape [.., ",
             proj_.weight.size(1) / 2, "], got ", shape_str(x.shape()), " and ", shape_str(s.shape()));
  Tensor pre = linear(Concat({x, s}), proj_.weight, proj_.bias);
  return sigmoid_gate(pre, x, s);
}

Tensor ConcatGate::gate_values(const Tensor& x, const Tensor& s) const {
  return sigmoid(linear(Concat({x, s}), proj_.weight, proj_.bias));
}

FeatureFusionGate::FeatureFusionGate(int64_t features, Activation act, Generator& gen, DType dtype)
    : act_(act), features_(features), proj_(3 * features, 2 * features, gen, true, dtype) {
  register_module("proj", proj_);
}

Tensor FeatureFusionGate::forward(const Tensor& x, const Tensor& h, const Tensor& e) const {
  return gate(proj_(concat({x, h, e}, -1)), x);
}

Tensor FeatureFusionGate::forward_block_context(const Tensor& x, const Tensor& h, const Tensor& e_blocks,
                                                int64_t block_len) const {
  const int64_t d = features_;
  ATTN_CHECK(block_len >= 1, "FeatureFusionGate", "block length must be positive, got ", block_len);
  ATTN_CHECK(x.dim() == 3 && x.size(2) == d && h.shape() == x.shape(), "FeatureFusionGate",
             "expects x and h of shape [B, m * block_len, ", d, "], got ", shape_str(x.shape()), " and ",
             shape_str(h.shape()));
  const int64_t b = x.size(0), m = x.size(1) / block_len;
  ATTN_CHECK(m * block_len == x.size(1) && e_blocks.shape() == Shape({b, m, d}), "FeatureFusionGate", "x ",
             shape_str(x.shape()), " is not ", block_len, "-token blocks of the block context ",
             shape_str(e_blocks.shape()));
  // W [2d, 3d] = [W_x | W_h | W_e]: views of the one parameter, so its name
  // and layout stay those of forward(). F's and G's rows are two products,
  // so each pre-activation is a tensor of its own (as halves of one [.., 2d]
  // product, their gradients would be assembled by zero-filling, copying and
  // adding two [.., 2d] tensors). x's and h's columns are one layer over
  // [x | h]: no concatenation forward and no split of its gradient backward.
  auto pre_activation = [&](int64_t first_row) {  // F's (0) or G's (d)
    const Tensor rows = narrow(proj_.weight, 0, first_row, d);
    Tensor tokens = linear(Concat({x, h}), Concat({narrow(rows, 1, 0, d), narrow(rows, 1, d, d)}),
                           narrow(proj_.bias, 0, first_row, d));
    Tensor blocks = linear(e_blocks, narrow(rows, 1, 2 * d, d));
    return reshape(reshape(tokens, {b, m, block_len, d}) + unsqueeze(blocks, 2), {b, m * block_len, d});
  };
  return sigmoid_gate(pre_activation(d), activate(act_, pre_activation(0)), x);
}

Tensor FeatureFusionGate::gate(const Tensor& both, const Tensor& x) const {
  Tensor f = activate(act_, narrow(both, -1, 0, features_));
  return sigmoid_gate(narrow(both, -1, features_, features_), f, x);
}

}  // namespace attn
