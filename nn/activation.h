// Activations chosen by name in configs: relu, elu, tanh, sigmoid, identity.
#pragma once
#include <string>

#include "attn/engine/tensor.h"

namespace attn {

enum class Activation { Relu, Elu, Tanh, Sigmoid, Identity };

// Throws attn::Error listing the known names for an unknown one.
Activation activation_from_name(const std::string& name);
const char* activation_name(Activation a);
Tensor activate(Activation a, const Tensor& x);

}  // namespace attn
