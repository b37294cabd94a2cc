// The gated mix of two tensors by a sigmoid gate, fused:
//
//   out = sigmoid(z) * a + (1 - sigmoid(z)) * b        (z, a, b broadcast together)
//
// as in the fusion gates (DiSAN Eq. 19, Bi-BloSAN, ReSAN), the highway
// layers and MTSA's gate. Composed, this is five ops forward and about ten
// backward, each a pass over [B, n, d]; fused it is one pass each way.
#pragma once
#include "attn/engine/tensor.h"

namespace attn {

// Differentiable in z, a and b; gradients of broadcast operands are summed
// back to their shapes.
Tensor sigmoid_gate(const Tensor& z, const Tensor& a, const Tensor& b);

}  // namespace attn
