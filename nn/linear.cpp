#include "attn/nn/linear.h"

#include "attn/nn/init.h"
#include "attn/ops/matmul/matmul.h"

namespace attn {

Linear::Linear(int64_t in_features, int64_t out_features, Generator& gen, bool with_bias, DType dtype) {
  weight = register_parameter("weight", glorot_uniform(out_features, in_features, gen, dtype));
  if (with_bias) bias = register_parameter("bias", zeros({out_features}, dtype));
}

Tensor Linear::forward(const Tensor& x, Activation act) const { return linear(x, weight, bias, act); }

}  // namespace attn
