// Kernel signatures of relu_gradient_columns (ops/relu_gradient_columns/relu_gradient_columns.h),
// one slot per device: grad and output contiguous [rows, cols], grad_in
// contiguous [rows, cols] (grad itself for an in-place select), sums [cols].
#pragma once
#include "attn/engine/tensor.h"

namespace attn {

void relu_gradient_columns_cpu(const Tensor& grad, const Tensor& output, const Tensor& grad_in, const Tensor& sums);

#ifdef ATTN_WITH_CUDA
void relu_gradient_columns_cuda(const Tensor& grad, const Tensor& output, const Tensor& grad_in, const Tensor& sums);
#endif

}  // namespace attn
