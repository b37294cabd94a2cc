#include "attn/nn/fusion_gate.h"

#include "attn/ops/binary.h"
#include "attn/ops/join.h"
#include "attn/ops/sigmoid_gate.h"
#include "attn/ops/unary.h"
#include "attn/ops/view.h"

namespace attn {

GatedFusion::GatedFusion(int64_t features, Generator& gen, DType dtype)
    : w1_(features, features, gen, false, dtype), w2_(features, features, gen, false, dtype) {
  register_module("w1", w1_);
  register_module("w2", w2_);
  bias_ = register_parameter("bias", zeros({features}, dtype));
}

Tensor GatedFusion::forward(const Tensor& s, const Tensor& h) const {
  return sigmoid_gate(w1_(s) + w2_(h) + bias_, h, s);
}

ConcatGate::ConcatGate(int64_t features, Generator& gen, DType dtype) : proj_(2 * features, features, gen, true, dtype) {
  register_module("proj", proj_);
}

Tensor ConcatGate::forward(const Tensor& x, const Tensor& s) const {
  return sigmoid_gate(proj_(concat({x, s}, -1)), x, s);
}

FeatureFusionGate::FeatureFusionGate(int64_t features, Activation act, Generator& gen, DType dtype)
    : act_(act), features_(features), proj_(3 * features, 2 * features, gen, true, dtype) {
  register_module("proj", proj_);
}

Tensor FeatureFusionGate::forward(const Tensor& x, const Tensor& h, const Tensor& e) const {
  Tensor both = proj_(concat({x, h, e}, -1));
  Tensor f = activate(act_, narrow(both, -1, 0, features_));
  return sigmoid_gate(narrow(both, -1, features_, features_), f, x);
}

}  // namespace attn
