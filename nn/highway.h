// Highway layer: t = sigmoid(W_t x + b_t), y = t * act(W_h x + b_h) + (1 - t) * x.
// Children: "transform" (W_h), "gate" (W_t).
#pragma once
#include "attn/engine/random.h"
#include "attn/nn/activation.h"
#include "attn/nn/linear.h"

namespace attn {

class Highway : public Module {
 public:
  Highway(int64_t features, Activation act, Generator& gen, DType dtype = DType::F32);
  Tensor forward(const Tensor& x) const;
  Tensor operator()(const Tensor& x) const { return forward(x); }

 private:
  Activation act_;
  Linear transform_, gate_;
};

}  // namespace attn
