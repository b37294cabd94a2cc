#include "attn/nn/token_conv.h"

#include <cmath>

#include "attn/ops/token_conv/token_conv.h"

namespace attn {

TokenConv::TokenConv(int64_t width, int64_t in_features, int64_t out_features, Generator& gen, DType dtype) {
  // Each output sums width * in inputs and each input reaches width * out
  // outputs: Glorot's variance argument with those fans (as TensorFlow's
  // and PyTorch's convolutions count them).
  const double a = std::sqrt(6.0 / static_cast<double>(width * (in_features + out_features)));
  weight = register_parameter("weight", rand_uniform({width, in_features, out_features}, -a, a, gen, dtype));
  bias = register_parameter("bias", zeros({out_features}, dtype));
}

Tensor TokenConv::forward(const Tensor& x, const Tensor& mask, Activation act) const {
  return token_conv(x, mask, weight, bias, act);
}

}  // namespace attn
