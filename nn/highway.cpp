#include "attn/nn/highway.h"

#include "attn/ops/sigmoid_gate/sigmoid_gate.h"

namespace attn {

Highway::Highway(int64_t features, Activation act, Generator& gen, DType dtype)
    : act_(act), transform_(features, features, gen, true, dtype), gate_(features, features, gen, true, dtype) {
  register_module("transform", transform_);
  register_module("gate", gate_);
}

Tensor Highway::forward(const Tensor& x) const {
  return sigmoid_gate(gate_(x), activate(act_, transform_(x)), x);
}

}  // namespace attn
