// Reduction kernels work on two canonical layouts of a contiguous input:
// rows (x is [outer, n], reduce each row) and columns (x is [outer, n, inner],
// reduce down each of the outer * inner columns; outer = 1 for a leading
// reduced block). ops/reduce/reduce.cpp brings every request to one of them.
#pragma once
#include "attn/engine/tensor.h"

namespace attn {

// SumOfSquares sums x[m, i]^2 in double and stores the double: out is
// float64 whatever x's dtype (a gradient's squared norm, ops/reduce/reduce.h).
enum class ReduceOp : uint8_t { Sum, Max, SumOfSquares };

// The op's name in errors ("sum", "max", "squared_norm"), on either device.
inline const char* reduce_op_name(ReduceOp op) {
  return op == ReduceOp::Sum ? "sum" : op == ReduceOp::Max ? "max" : "squared_norm";
}

// out[m] = reduce(x[m, :]); for Max also argmax[m] (int64) when defined.
void reduce_rows_cpu(ReduceOp op, const Tensor& x, int64_t outer, int64_t n, const Tensor& out, const Tensor& argmax);
// out[o, j] = sum_i x[o, i, j].
void sum_columns_cpu(const Tensor& x, int64_t outer, int64_t n, int64_t inner, const Tensor& out);
// grad_in[m, argmax[m]] = grad[m], zero elsewhere (grad_in is [outer, n], contiguous).
void max_backward_cpu(const Tensor& grad, const Tensor& argmax, int64_t outer, int64_t n, const Tensor& grad_in);

#ifdef ATTN_WITH_CUDA
void reduce_rows_cuda(ReduceOp op, const Tensor& x, int64_t outer, int64_t n, const Tensor& out, const Tensor& argmax);
void sum_columns_cuda(const Tensor& x, int64_t outer, int64_t n, int64_t inner, const Tensor& out);
void max_backward_cuda(const Tensor& grad, const Tensor& argmax, int64_t outer, int64_t n, const Tensor& grad_in);
#endif

}  // namespace attn
