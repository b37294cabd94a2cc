// y = act(x W^T + b) with Glorot-uniform W [out, in] and zero b [out].
// Parameters: "weight", "bias".
#pragma once
#include "attn/engine/random.h"
#include "attn/nn/activation.h"
#include "attn/nn/module.h"

namespace attn {

class Linear : public Module {
 public:
  Linear(int64_t in_features, int64_t out_features, Generator& gen, bool bias = true, DType dtype = DType::F32);
  // The product and its activation are one call of ops/matmul/matmul.h
  // linear, which picks the kernel (a relu taken as the GEMM stores its sums).
  Tensor forward(const Tensor& x, Activation act = Activation::None) const;
  Tensor operator()(const Tensor& x) const { return forward(x); }

  Tensor weight;
  Tensor bias;  // undefined when built without bias
};

}  // namespace attn
