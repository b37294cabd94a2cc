#include "attn/nn/activation.h"

#include "attn/engine/error.h"
#include "attn/ops/unary/unary.h"

namespace attn {

Activation activation_from_name(const std::string& name) {
  if (name == "relu") return Activation::Relu;
  if (name == "elu") return Activation::Elu;
  if (name == "tanh") return Activation::Tanh;
  if (name == "sigmoid") return Activation::Sigmoid;
  if (name == "identity" || name == "linear" || name == "none") return Activation::Identity;
  ATTN_CHECK(false, "activation", "unknown activation '", name, "' (known: relu, elu, tanh, sigmoid, identity)");
  return Activation::Identity;
}

const char* activation_name(Activation a) {
  switch (a) {
    case Activation::Relu: return "relu";
    case Activation::Elu: return "elu";
    case Activation::Tanh: return "tanh";
    case Activation::Sigmoid: return "sigmoid";
    case Activation::Identity: return "identity";
  }
  return "?";
}

Tensor activate(Activation a, const Tensor& x) {
  switch (a) {
    case Activation::Relu: return relu(x);
    case Activation::Elu: return elu(x);
    case Activation::Tanh: return tanh(x);
    case Activation::Sigmoid: return sigmoid(x);
    case Activation::Identity: return x;
  }
  return x;
}

}  // namespace attn
