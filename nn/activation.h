// Activations chosen by name in configs: relu, elu, tanh, sigmoid, identity
// (the enum and activate() are ops/unary/unary_activation.h; "identity" is
// Activation::None).
#pragma once
#include <string>

#include "attn/ops/unary/unary_activation.h"

namespace attn {

// Throws attn::Error listing the known names for an unknown one.
Activation activation_from_name(const std::string& name);
const char* activation_name(Activation a);

}  // namespace attn
