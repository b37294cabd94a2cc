#include "attn/nn/layer_norm.h"

#include "attn/ops/layer_norm/layer_norm.h"

namespace attn {

LayerNorm::LayerNorm(int64_t features, double eps, DType dtype) : eps_(eps) {
  weight = register_parameter("weight", ones({features}, dtype));
  bias = register_parameter("bias", zeros({features}, dtype));
}

Tensor LayerNorm::forward(const Tensor& x) const { return layer_norm(x, weight, bias, eps_); }

}  // namespace attn
