// Layer normalisation over the last axis with learned gain ("weight", ones)
// and bias ("bias", zeros); eps 1e-6 as in the papers' code.
#pragma once
#include "attn/nn/module.h"

namespace attn {

class LayerNorm : public Module {
 public:
  explicit LayerNorm(int64_t features, double eps = 1e-6, DType dtype = DType::F32);
  Tensor forward(const Tensor& x) const;
  Tensor operator()(const Tensor& x) const { return forward(x); }

  Tensor weight, bias;

 private:
  double eps_;
};

}  // namespace attn
