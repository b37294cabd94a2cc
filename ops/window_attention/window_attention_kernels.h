// Kernel signatures of the fused window attention (ops/window_attention/window_attention.h),
// one slot per device. q, k, v, out, grad, grad_q, grad_k and grad_v are
// [B, h, n, d] tensors with a contiguous feature axis and any other strides
// (HeadRows), seen as G = B h independent heads; allowed is contiguous
// [B, n, W] (shared by an example's heads) or [B, h, n, W] (one band per
// head); probabilities contiguous [B, h, n, W].
#pragma once
#include "attn/ops/head_rows.h"

namespace attn {

// out and probabilities as in ops/window_attention/window_attention.h (rows without an
// allowed key: zeros in both).
void window_attention_forward_cpu(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& allowed,
                                  double scale, const Tensor& out, const Tensor& probabilities);

// With dP[j,t] = grad[j] . v[i] and dS = P (dP - sum_t P dP), i = j - R + t:
//   grad_q[j] = scale sum_t dS[j,t] k[i],  grad_k[i] = scale sum_j dS[j,t] q[j],
//   grad_v[i] = sum_j P[j,t] grad[j].
// All three outputs are written (no accumulation into existing values).
void window_attention_backward_cpu(const Tensor& grad, const Tensor& q, const Tensor& k, const Tensor& v,
                                   const Tensor& allowed, const Tensor& probabilities, double scale,
                                   const Tensor& grad_q, const Tensor& grad_k, const Tensor& grad_v);

#ifdef ATTN_WITH_CUDA
void window_attention_forward_cuda(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& allowed,
                                   double scale, const Tensor& out, const Tensor& probabilities);
void window_attention_backward_cuda(const Tensor& grad, const Tensor& q, const Tensor& k, const Tensor& v,
                                    const Tensor& allowed, const Tensor& probabilities, double scale,
                                    const Tensor& grad_q, const Tensor& grad_k, const Tensor& grad_v);
#endif

}  // namespace attn
