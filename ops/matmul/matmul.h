// Matrix products through BLAS: batched matmul with NumPy batch broadcasting,
// and the linear layer. Transposed operands reach BLAS as trans flags, so a
// transpose view costs no copy.
//
// Callers say what they compute: a product or a linear layer, with an
// optional per-column bias and an activation, over one input or over the
// concatenation of several (Concat). Which kernel serves the call is decided
// here (ops/matmul/matmul_fusion.cpp): a bias added and a relu taken as the
// GEMM stores its sums, a concatenation as one accumulating GEMM per part,
// or an unfused pass after the product where no kernel fuses the step. The
// fused entry points themselves are ops/matmul/matmul_fused.h.
#pragma once
#include <utility>
#include <vector>

#include "attn/engine/tensor.h"
#include "attn/ops/unary/unary_activation.h"

namespace attn {

// Several tensors read as their concatenation along the last axis, which is
// never built: a product over [x_1 | x_2] is x_1 W_1 + x_2 W_2, and the
// parts' gradients come out as tensors of their own rather than strided
// views of one.
struct Concat {
  explicit Concat(std::vector<Tensor> parts) : parts(std::move(parts)) {}
  std::vector<Tensor> parts;
};

// a [..., m, k] @ b [..., k, n] -> [..., m, n], batch axes broadcast. A 1-D b
// [k] gives [..., m]; a 1-D a [k] gives [..., n]. The result is contiguous.
Tensor matmul(const Tensor& a, const Tensor& b);

// act(a [..., m, k] @ b [..., k, n] + bias), operands of rank >= 2. bias,
// when defined, is [n] or [..., 1, n]: one value per output column for each
// batch entry, broadcasting over the batch axes (MTSA's per-head bias
// [heads, 1, n]). Undefined, it is matmul(a, b) then act.
Tensor matmul(const Tensor& a, const Tensor& b, const Tensor& bias, Activation act = Activation::None);

// act([a_1 | a_2 | ...] @ b + bias): the parts [..., m, k_i] share their
// other axes, b [..., sum k_i, n] is split by rows among them (MTSA's gate:
// [v_c | H_c] W_g,c on row views of one per-head weight); bias as above.
Tensor matmul(const Concat& a, const Tensor& b, const Tensor& bias = Tensor(),
              Activation act = Activation::None);

// act(x [..., in] times weight [out, in] transposed + bias [out]), the bias
// when defined: one GEMM over all leading axes of x.
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor(),
              Activation act = Activation::None);

// The layer over [x_1 | x_2 | ...] (parts [..., in_i] sharing their leading
// axes) with weight [out, sum in_i], split by columns among them.
Tensor linear(const Concat& x, const Tensor& weight, const Tensor& bias = Tensor(),
              Activation act = Activation::None);

// The same with the weight given as its column blocks [W_1 | W_2 | ...]
// (weights [out, in_i], one per part): two layers' weights kept as
// parameters of their own (W1 s + W2 h + b), or column views of one.
Tensor linear(const Concat& x, const Concat& weight, const Tensor& bias = Tensor(),
              Activation act = Activation::None);

}  // namespace attn
