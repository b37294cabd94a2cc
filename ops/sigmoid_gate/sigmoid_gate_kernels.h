// Kernel signatures of the sigmoid gate (ops/sigmoid_gate/sigmoid_gate.h), one slot per
// device. z, a and b are read through broadcast strides against out's shape,
// grad through its own strides; out and the three gradients are contiguous
// in that shape.
#pragma once
#include "attn/engine/tensor.h"

namespace attn {

// out = g a + (1 - g) b with g = sigmoid(z).
void sigmoid_gate_cpu(const Tensor& z, const Tensor& a, const Tensor& b, const Tensor& out);
// grad_z = grad (a - b) g (1 - g), grad_a = grad g, grad_b = grad (1 - g).
void sigmoid_gate_backward_cpu(const Tensor& grad, const Tensor& z, const Tensor& a, const Tensor& b,
                               const Tensor& grad_z, const Tensor& grad_a, const Tensor& grad_b);

#ifdef ATTN_WITH_CUDA
void sigmoid_gate_cuda(const Tensor& z, const Tensor& a, const Tensor& b, const Tensor& out);
void sigmoid_gate_backward_cuda(const Tensor& grad, const Tensor& z, const Tensor& a, const Tensor& b,
                                const Tensor& grad_z, const Tensor& grad_a, const Tensor& grad_b);
#endif

}  // namespace attn
