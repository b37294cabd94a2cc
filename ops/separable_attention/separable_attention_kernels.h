// Kernel signatures of the separable attention (ops/separable_attention/separable_attention.h),
// one slot per device. Every tensor is contiguous: a, allowed, keep_pairs and
// grad_a are [G, nq, nk]; s, v, keep_features, grad_s and grad_v [G, nk, d];
// out, log_norm and grad [G, nq, d]. keep_pairs / keep_features may be
// undefined (no dropout).
#pragma once
#include "attn/engine/tensor.h"

namespace attn {

// out as in ops/separable_attention/separable_attention.h; log_norm[g,j,l] = log sum_i exp(f)
// over the allowed keys, so the backward gets P = exp(f - log_norm) without
// a second pass. Rows without an allowed key: out = 0, log_norm = 0.
void separable_attention_forward_cpu(const Tensor& a, const Tensor& s, const Tensor& v, const Tensor& allowed,
                                     const Tensor& keep_pairs, const Tensor& keep_features, const Tensor& out,
                                     const Tensor& log_norm);

// With dF = P * grad[j,l] * (w * v[i,l] - out[j,l]):
//   grad_a[j,i] = sum_l dF,  grad_s[i,l] = sum_j dF,  grad_v[i,l] = sum_j P w grad[j,l].
// All three outputs are written (no accumulation into existing values).
void separable_attention_backward_cpu(const Tensor& grad, const Tensor& a, const Tensor& s, const Tensor& v,
                                      const Tensor& allowed, const Tensor& keep_pairs, const Tensor& keep_features,
                                      const Tensor& out, const Tensor& log_norm, const Tensor& grad_a,
                                      const Tensor& grad_s, const Tensor& grad_v);

#ifdef ATTN_WITH_CUDA
void separable_attention_forward_cuda(const Tensor& a, const Tensor& s, const Tensor& v, const Tensor& allowed,
                                      const Tensor& keep_pairs, const Tensor& keep_features, const Tensor& out,
                                      const Tensor& log_norm);
void separable_attention_backward_cuda(const Tensor& grad, const Tensor& a, const Tensor& s, const Tensor& v,
                                       const Tensor& allowed, const Tensor& keep_pairs, const Tensor& keep_features,
                                       const Tensor& out, const Tensor& log_norm, const Tensor& grad_a,
                                       const Tensor& grad_s, const Tensor& grad_v);
#endif

}  // namespace attn
