// Kernel signatures of the unary family, one slot per device.
#pragma once
#include "attn/ops/unary/unary.h"

namespace attn {

// out = f(x); out is contiguous with x's shape.
void unary_forward_cpu(UnaryOp op, UnaryParams p, const Tensor& x, const Tensor& out);
// grad_in = grad * f'(x) (using the saved output y where cheaper).
void unary_backward_cpu(UnaryOp op, UnaryParams p, const Tensor& x, const Tensor& y, const Tensor& grad,
                        const Tensor& grad_in);

#ifdef ATTN_WITH_CUDA
void unary_forward_cuda(UnaryOp op, UnaryParams p, const Tensor& x, const Tensor& out);
void unary_backward_cuda(UnaryOp op, UnaryParams p, const Tensor& x, const Tensor& y, const Tensor& grad,
                         const Tensor& grad_in);
#endif

}  // namespace attn
