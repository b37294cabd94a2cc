// Matrix products through BLAS: batched matmul with NumPy batch broadcasting,
// and the fused linear layer. Transposed operands reach BLAS as trans flags,
// so a transpose view costs no copy.
#pragma once
#include "attn/engine/tensor.h"

namespace attn {

// a [..., m, k] @ b [..., k, n] -> [..., m, n], batch axes broadcast. A 1-D b
// [k] gives [..., m]; a 1-D a [k] gives [..., n]. The result is contiguous.
Tensor matmul(const Tensor& a, const Tensor& b);

// x [..., in] times weight [out, in] transposed, plus bias [out] when defined:
// one GEMM over all leading axes of x, with the bias folded into it.
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor());

}  // namespace attn
