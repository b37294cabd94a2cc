#include "attn/ops/unary/unary_activation.h"

#include "attn/ops/unary/unary.h"

namespace attn {

Tensor activate(Activation a, const Tensor& x) {
  switch (a) {
    case Activation::None: return x;
    case Activation::Relu: return relu(x);
    case Activation::Elu: return elu(x);
    case Activation::Tanh: return tanh(x);
    case Activation::Sigmoid: return sigmoid(x);
  }
  return x;
}

}  // namespace attn
