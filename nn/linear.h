// y = x W^T + b with Glorot-uniform W [out, in] and zero b [out].
// Parameters: "weight", "bias".
#pragma once
#include "attn/engine/random.h"
#include "attn/nn/activation.h"
#include "attn/nn/module.h"

namespace attn {

class Linear : public Module {
 public:
  Linear(int64_t in_features, int64_t out_features, Generator& gen, bool bias = true, DType dtype = DType::F32);
  Tensor forward(const Tensor& x) const;
  Tensor operator()(const Tensor& x) const { return forward(x); }
  // activate(a, forward(x)); a relu is fused into the product (linear_relu):
  // one pass over the output instead of two.
  Tensor forward_activated(Activation a, const Tensor& x) const;

  Tensor weight;
  Tensor bias;  // undefined when built without bias
};

}  // namespace attn
