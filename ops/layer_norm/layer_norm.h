// Layer normalisation over the last axis: the per-token normaliser of a
// transformer block. Forward and backward are fused row kernels, so each row
// is read once per pass and the backward needs only the per-row mean and
// 1/std saved by the forward.
#pragma once
#include "attn/engine/tensor.h"

namespace attn {

// y = (x - mean) / sqrt(var + eps) * gamma + beta, with mean and (biased)
// variance taken over the last axis of x [..., D]. gamma and beta are [D];
// either may be undefined (no scale / no shift). x may be any layout.
Tensor layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps = 1e-6);

}  // namespace attn
