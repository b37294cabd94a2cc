// Kernel signatures of the modulated linear map (ops/modulated_linear/modulated_linear.h),
// one slot per device. Every operand is contiguous: x [B, n, d], scale
// [B, d], weight and scaled_weight [h, d], out and grad [B, n, h].
#pragma once
#include "attn/engine/tensor.h"

namespace attn {

void modulated_linear_cpu(const Tensor& x, const Tensor& scale, const Tensor& weight, const Tensor& scaled_weight,
                          const Tensor& out);
// Writes each defined gradient (grad_x [B, n, d], grad_scale [B, d],
// grad_weight and grad_scaled_weight [h, d]); undefined ones are not needed.
void modulated_linear_backward_cpu(const Tensor& grad, const Tensor& x, const Tensor& scale, const Tensor& weight,
                                   const Tensor& scaled_weight, const Tensor& grad_x, const Tensor& grad_scale,
                                   const Tensor& grad_weight, const Tensor& grad_scaled_weight);

#ifdef ATTN_WITH_CUDA
void modulated_linear_cuda(const Tensor& x, const Tensor& scale, const Tensor& weight, const Tensor& scaled_weight,
                           const Tensor& out);
void modulated_linear_backward_cuda(const Tensor& grad, const Tensor& x, const Tensor& scale, const Tensor& weight,
                                    const Tensor& scaled_weight, const Tensor& grad_x, const Tensor& grad_scale,
                                    const Tensor& grad_weight, const Tensor& grad_scaled_weight);
#endif

}  // namespace attn
