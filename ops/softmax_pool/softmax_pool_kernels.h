// Kernel signatures of the softmax pooling (ops/softmax_pool/softmax_pool.h), one slot
// per device. scores, values and probs are contiguous [B, n, d]; mask is a
// contiguous uint8 [B, n] or undefined (every token valid); out is a
// contiguous [B, d]. probs (undefined: not kept) holds the softmax weights, 0 at masked tokens
// and where no valid token has a finite score: the backward reads them
// rather than recomputing an exp per element, in the memory the composed
// softmax kept them in.
#pragma once
#include "attn/engine/tensor.h"

namespace attn {

void softmax_pool_cpu(const Tensor& scores, const Tensor& values, const Tensor& mask, const Tensor& out,
                      const Tensor& probs);
// At valid tokens grad_values = grad p and grad_scores = grad p (value -
// out); exactly 0 at masked ones. Both [B, n, d].
void softmax_pool_backward_cpu(const Tensor& grad, const Tensor& probs, const Tensor& values, const Tensor& mask,
                               const Tensor& out, const Tensor& grad_scores, const Tensor& grad_values);

#ifdef ATTN_WITH_CUDA
void softmax_pool_cuda(const Tensor& scores, const Tensor& values, const Tensor& mask, const Tensor& out,
                       const Tensor& probs);
void softmax_pool_backward_cuda(const Tensor& grad, const Tensor& probs, const Tensor& values, const Tensor& mask,
                                const Tensor& out, const Tensor& grad_scores, const Tensor& grad_values);
#endif

}  // namespace attn
