// Kernel signatures of the fused dot-product attention
// (ops/dot_product_attention/dot_product_attention.h), one slot per device. q, k, v, out, grad,
// grad_q, grad_k and grad_v are [B, h, n, d] tensors with a contiguous
// feature axis and any other strides (HeadRows); key_valid is contiguous
// [B, nk]; probabilities contiguous [B, h, nq, nk].
#pragma once
#include "attn/ops/head_rows.h"

namespace attn {

// out and probabilities as in ops/dot_product_attention/dot_product_attention.h (rows without a
// valid key: zeros in both).
void dot_product_attention_forward_cpu(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& key_valid,
                                       double scale, const Tensor& out, const Tensor& probabilities);

// With dP[j,i] = grad[j] . v[i] and dS = P (dP - sum_i P dP) over valid keys:
//   grad_q[j] = scale sum_i dS[j,i] k[i],  grad_k[i] = scale sum_j dS[j,i] q[j],
//   grad_v[i] = sum_j P[j,i] grad[j].
// All three outputs are written (no accumulation into existing values).
void dot_product_attention_backward_cpu(const Tensor& grad, const Tensor& q, const Tensor& k, const Tensor& v,
                                        const Tensor& key_valid, const Tensor& probabilities, double scale,
                                        const Tensor& grad_q, const Tensor& grad_k, const Tensor& grad_v);

#ifdef ATTN_WITH_CUDA
void dot_product_attention_forward_cuda(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& key_valid,
                                        double scale, const Tensor& out, const Tensor& probabilities);
void dot_product_attention_backward_cuda(const Tensor& grad, const Tensor& q, const Tensor& k, const Tensor& v,
                                         const Tensor& key_valid, const Tensor& probabilities, double scale,
                                         const Tensor& grad_q, const Tensor& grad_k, const Tensor& grad_v);
#endif

}  // namespace attn
