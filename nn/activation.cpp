#include "attn/nn/activation.h"

#include "attn/util/named_values.h"

namespace attn {

namespace {
// "linear" and "none" are accepted spellings of the identity.
const NamedValue<Activation> kActivationNames[] = {
    {Activation::Relu, "relu"},       {Activation::Elu, "elu"},        {Activation::Tanh, "tanh"},
    {Activation::Sigmoid, "sigmoid"}, {Activation::None, "identity"}, {Activation::None, "linear"},
    {Activation::None, "none"}};
}  // namespace

Activation activation_from_name(const std::string& name) {
  return value_from_name(kActivationNames, name, "activation", "activation");
}

const char* activation_name(Activation a) { return name_of_value(kActivationNames, a); }

}  // namespace attn
