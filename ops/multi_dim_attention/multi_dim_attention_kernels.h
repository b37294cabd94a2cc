// Kernel signatures of the fused multi-dimensional attention, one slot per
// device. Every tensor is contiguous: query, out, log_norm, grad and
// grad_query are [B, nq, d]; key, values, grad_key and grad_values are
// [B, nk, d]; mask is uint8 [B, nq, nk].
#pragma once
#include "attn/engine/tensor.h"

namespace attn {

// out as in ops/multi_dim_attention.h. log_norm[b,i,f] = log sum_j exp(L)
// over the valid keys (the softmax's normaliser), so the backward gets
// P = exp(L - log_norm) without a second pass; rows without a valid key get
// out = 0 and log_norm = 0 (never read: all their pairs are masked).
void multi_dim_attention_forward_cpu(const Tensor& query, const Tensor& key, const Tensor& values,
                                     const Tensor& mask, double scale_c, const Tensor& out, const Tensor& log_norm);

// From the upstream grad, the inputs and the saved out and log_norm, with
// dL = P * grad_i * (values_j - out_i) and dpre = dL * (1 - (L / c)^2):
//   grad_query[i] = sum_j dpre,  grad_key[j] = sum_i dpre,
//   grad_values[j] = sum_i P * grad_i.
// All three outputs are written (no accumulation into existing values).
void multi_dim_attention_backward_cpu(const Tensor& grad, const Tensor& query, const Tensor& key,
                                      const Tensor& values, const Tensor& mask, double scale_c, const Tensor& out,
                                      const Tensor& log_norm, const Tensor& grad_query, const Tensor& grad_key,
                                      const Tensor& grad_values);

#ifdef ATTN_WITH_CUDA
void multi_dim_attention_forward_cuda(const Tensor& query, const Tensor& key, const Tensor& values,
                                      const Tensor& mask, double scale_c, const Tensor& out, const Tensor& log_norm);
void multi_dim_attention_backward_cuda(const Tensor& grad, const Tensor& query, const Tensor& key,
                                       const Tensor& values, const Tensor& mask, double scale_c, const Tensor& out,
                                       const Tensor& log_norm, const Tensor& grad_query, const Tensor& grad_key,
                                       const Tensor& grad_values);
#endif

}  // namespace attn
