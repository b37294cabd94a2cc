// Kernel signatures of the fused window attention
// (ops/window_attention/window_attention.h), one slot per device, as
// AttentionForwardKernel and AttentionBackwardKernel
// (ops/dot_product_attention/dot_product_attention_fused.h) with the mask
// allowed, contiguous [B, n, W] (shared by an example's heads) or
// [B, h, n, W] (one band per head), and q, k, v seen as G = B h independent
// heads; probabilities contiguous [B, h, n, W]: out and probabilities as in
// the op's header (rows without an allowed key: zeros in both). With
// dP[j,t] = grad[j] . v[i] and dS = P (dP - sum_t P dP), i = j - R + t:
//   grad_q[j] = scale sum_t dS[j,t] k[i],  grad_k[i] = scale sum_j dS[j,t] q[j],
//   grad_v[i] = sum_j P[j,t] grad[j].
#pragma once
#include "attn/ops/dot_product_attention/dot_product_attention_fused.h"

namespace attn {

AttentionForwardKernel window_attention_forward_cpu;
AttentionBackwardKernel window_attention_backward_cpu;

#ifdef ATTN_WITH_CUDA
AttentionForwardKernel window_attention_forward_cuda;
AttentionBackwardKernel window_attention_backward_cuda;
#endif

}  // namespace attn
