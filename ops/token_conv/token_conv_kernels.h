// Kernel signatures of the token unfold (ops/token_conv/token_conv.h), one
// slot per device. x and grad_x are contiguous [B, n, d], cols and grad_cols
// contiguous [B, n, k, d], mask a contiguous uint8 [B, n] or undefined
// (every token valid). Window tap j of token t reads token t + j - left.
#pragma once
#include "attn/engine/tensor.h"

namespace attn {

// cols[b, t, j] = x[b, s] with s = t + j - left when 0 <= s < n and both t
// and s are valid, else exact zeros (selected, never multiplied).
void token_unfold_cpu(const Tensor& x, const Tensor& mask, int64_t left, const Tensor& cols);
// grad_x[b, s] = sum over j of grad_cols[b, s - j + left, j] (taps whose
// token t exists and is valid, j ascending); 0 at padded s.
void token_unfold_backward_cpu(const Tensor& grad_cols, const Tensor& mask, int64_t left, const Tensor& grad_x);

#ifdef ATTN_WITH_CUDA
void token_unfold_cuda(const Tensor& x, const Tensor& mask, int64_t left, const Tensor& cols);
void token_unfold_backward_cuda(const Tensor& grad_cols, const Tensor& mask, int64_t left, const Tensor& grad_x);
#endif

}  // namespace attn
