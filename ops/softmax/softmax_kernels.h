// Kernel signatures of the softmax family, one slot per device. Every tensor
// is contiguous in the rows layout: the softmax axis is last, so x is
// [rows, n] with n = x.shape().back().
#pragma once
#include "attn/engine/tensor.h"

namespace attn {

// out = softmax (log == false) or log_softmax (log == true) of each row of x.
// mask: uint8 [rows, n] or undefined (all valid). row_empty: uint8 [rows] or
// undefined; when defined, set to 1 for rows without a valid finite entry
// (their output is all zeros) and 0 otherwise.
void softmax_forward_cpu(bool log, const Tensor& x, const Tensor& mask, const Tensor& out, const Tensor& row_empty);

// grad_in from the saved output y and the upstream grad, row by row:
//   softmax:     grad_in = y * (grad - sum(grad * y))
//   log_softmax: grad_in = grad - exp(y) * sum(grad) over valid entries,
//                0 at masked entries and in rows flagged by row_empty.
// mask and row_empty are read by log_softmax only (undefined = none).
void softmax_backward_cpu(bool log, const Tensor& y, const Tensor& grad, const Tensor& mask, const Tensor& row_empty,
                          const Tensor& grad_in);

// Softmax over the middle axis of a contiguous x [outer, n, inner] (an axis
// that is not last), without permuting: each of the outer * inner columns is
// one softmax over n. mask: uint8 [outer, n] (one flag for every feature of a
// row), [outer, n, inner], or undefined. A column without a valid entry is
// all zeros. The backward is softmax's, grad_in = y * (grad - sum(grad * y)).
void softmax_columns_forward_cpu(const Tensor& x, const Tensor& mask, int64_t outer, int64_t n, int64_t inner,
                                 const Tensor& out);
void softmax_columns_backward_cpu(const Tensor& y, const Tensor& grad, int64_t outer, int64_t n, int64_t inner,
                                  const Tensor& grad_in);

#ifdef ATTN_WITH_CUDA
void softmax_forward_cuda(bool log, const Tensor& x, const Tensor& mask, const Tensor& out, const Tensor& row_empty);
void softmax_backward_cuda(bool log, const Tensor& y, const Tensor& grad, const Tensor& mask, const Tensor& row_empty,
                           const Tensor& grad_in);
void softmax_columns_forward_cuda(const Tensor& x, const Tensor& mask, int64_t outer, int64_t n, int64_t inner,
                                  const Tensor& out);
void softmax_columns_backward_cuda(const Tensor& y, const Tensor& grad, int64_t outer, int64_t n, int64_t inner,
                                   const Tensor& grad_in);
#endif

}  // namespace attn
