// Kernel signatures of the binary family. Inputs are already checked:
// same dtype and device, shapes broadcast to out's shape.
#pragma once
#include "attn/ops/binary/binary.h"

namespace attn {

void binary_forward_cpu(BinaryOp op, const Tensor& a, const Tensor& b, const Tensor& out);
void compare_cpu(CompareOp op, const Tensor& a, const Tensor& b, const Tensor& out);
void where_cpu(const Tensor& cond, const Tensor& a, const Tensor& b, const Tensor& out);
void axpy_cpu(const Tensor& dst, double alpha, const Tensor& src);

#ifdef ATTN_WITH_CUDA
void binary_forward_cuda(BinaryOp op, const Tensor& a, const Tensor& b, const Tensor& out);
void compare_cuda(CompareOp op, const Tensor& a, const Tensor& b, const Tensor& out);
void where_cuda(const Tensor& cond, const Tensor& a, const Tensor& b, const Tensor& out);
void axpy_cuda(const Tensor& dst, double alpha, const Tensor& src);
#endif

}  // namespace attn
