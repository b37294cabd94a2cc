#include "attn/nn/activation.h"

#include "attn/engine/error.h"

namespace attn {

Activation activation_from_name(const std::string& name) {
  if (name == "relu") return Activation::Relu;
  if (name == "elu") return Activation::Elu;
  if (name == "tanh") return Activation::Tanh;
  if (name == "sigmoid") return Activation::Sigmoid;
  if (name == "identity" || name == "linear" || name == "none") return Activation::None;
  ATTN_CHECK(false, "activation", "unknown activation '", name, "' (known: relu, elu, tanh, sigmoid, identity)");
  return Activation::None;
}

const char* activation_name(Activation a) {
  switch (a) {
    case Activation::Relu: return "relu";
    case Activation::Elu: return "elu";
    case Activation::Tanh: return "tanh";
    case Activation::Sigmoid: return "sigmoid";
    case Activation::None: return "identity";
  }
  return "?";
}

}  // namespace attn
