// Kernel signatures of the fused dot-product attention
// (ops/dot_product_attention/dot_product_attention.h), one slot per device,
// as AttentionForwardKernel and AttentionBackwardKernel
// (ops/dot_product_attention/dot_product_attention_fused.h) with the mask
// key_valid, contiguous [B, nk]; probabilities contiguous [B, h, nq, nk]:
// out and probabilities as in the op's header (rows without a valid key:
// zeros in both). With dP[j,i] = grad[j] . v[i] and dS = P (dP - sum_i P dP)
// over valid keys:
//   grad_q[j] = scale sum_i dS[j,i] k[i],  grad_k[i] = scale sum_j dS[j,i] q[j],
//   grad_v[i] = sum_j P[j,i] grad[j].
#pragma once
#include "attn/ops/dot_product_attention/dot_product_attention_fused.h"

namespace attn {

AttentionForwardKernel dot_product_attention_forward_cpu;
AttentionBackwardKernel dot_product_attention_backward_cpu;
// The causal order (causal_dot_product_attention): key i also needs i <= j + nk - nq.
AttentionForwardKernel causal_dot_product_attention_forward_cpu;
AttentionBackwardKernel causal_dot_product_attention_backward_cpu;

#ifdef ATTN_WITH_CUDA
AttentionForwardKernel dot_product_attention_forward_cuda;
AttentionBackwardKernel dot_product_attention_backward_cuda;
AttentionForwardKernel causal_dot_product_attention_forward_cuda;
AttentionBackwardKernel causal_dot_product_attention_backward_cuda;
#endif

}  // namespace attn
