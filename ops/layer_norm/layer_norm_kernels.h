// Kernel signatures of the layer_norm family, one slot per device. Every
// tensor is contiguous: x, y, grad and grad_x are [rows, D]; gamma, beta,
// grad_gamma and grad_beta are [D]; mean and rstd are [rows].
#pragma once
#include <cstdint>

#include "attn/engine/tensor.h"

namespace attn {

// y = (x - mean) * rstd * gamma + beta per row, rstd = 1 / sqrt(var + eps).
// gamma or beta may be undefined. Also writes each row's mean and rstd.
void layer_norm_forward_cpu(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps, int64_t rows,
                            int64_t D, const Tensor& y, const Tensor& mean, const Tensor& rstd);
// From the upstream grad and the saved x, mean and rstd: writes each of
// grad_x, grad_gamma, grad_beta that is defined (the others are skipped).
// gamma may be undefined (treated as ones).
void layer_norm_backward_cpu(const Tensor& grad, const Tensor& x, const Tensor& gamma, const Tensor& mean,
                             const Tensor& rstd, int64_t rows, int64_t D, const Tensor& grad_x,
                             const Tensor& grad_gamma, const Tensor& grad_beta);

#ifdef ATTN_WITH_CUDA
void layer_norm_forward_cuda(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps, int64_t rows,
                             int64_t D, const Tensor& y, const Tensor& mean, const Tensor& rstd);
void layer_norm_backward_cuda(const Tensor& grad, const Tensor& x, const Tensor& gamma, const Tensor& mean,
                              const Tensor& rstd, int64_t rows, int64_t D, const Tensor& grad_x,
                              const Tensor& grad_gamma, const Tensor& grad_beta);
#endif

}  // namespace attn
