#include "attn/nn/highway.h"

#include "attn/ops/binary.h"
#include "attn/ops/unary.h"

namespace attn {

Highway::Highway(int64_t features, Activation act, Generator& gen, DType dtype)
    : act_(act), transform_(features, features, gen, true, dtype), gate_(features, features, gen, true, dtype) {
  register_module("transform", transform_);
  register_module("gate", gate_);
}

Tensor Highway::forward(const Tensor& x) const {
  Tensor t = sigmoid(gate_(x));
  Tensor h = activate(act_, transform_(x));
  return t * h + (1.0 - t) * x;
}

}  // namespace attn
