// CUDA kernel of relu_gradient_columns: relu's backward kernel, then the
// column sums of its result (the two passes the CPU kernel fuses).
#include "attn/ops/reduce/reduce_kernels.h"
#include "attn/ops/relu_gradient_columns/relu_gradient_columns_kernels.h"
#include "attn/ops/unary/unary_kernels.h"

namespace attn {

void relu_gradient_columns_cuda(const Tensor& grad, const Tensor& output, const Tensor& grad_in, const Tensor& sums) {
  unary_backward_cuda(UnaryOp::Relu, UnaryParams{}, output, output, grad, grad_in);
  sum_columns_cuda(grad_in, 1, grad.size(0), grad.size(1), sums);
}

}  // namespace attn
