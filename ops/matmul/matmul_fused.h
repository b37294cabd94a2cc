// The fused entry points of the matmul family. ops/matmul/matmul_fusion.cpp
// picks one per call of the plain products (ops/matmul/matmul.h), which is
// what layers and models call; they are public for the tests of each path
// and for the benchmarks that time one kernel.
#pragma once
#include <vector>

#include "attn/engine/tensor.h"

namespace attn {

// sum_i as[i] @ bs[i], every term of rank >= 2 with the same result shape
// (batch axes broadcast as in matmul). One GEMM per term into the same
// output, the later ones accumulating (beta = 1): a product over a
// concatenation [a_1 | a_2] (last axis) with [b_1; b_2] (rows of one
// parameter) needs no concatenated copy forward and no split of its
// gradient backward.
// With a bias (as matmul_bias takes it) the first term writes onto it.
Tensor matmul_sum(const std::vector<Tensor>& as, const std::vector<Tensor>& bs, const Tensor& bias = Tensor());

// a [..., m, k] @ b [..., k, n] + bias, relu'd with `relu`: bias is [n] or
// [..., 1, n], one value per output column for each batch entry
// (broadcasting over the batch axes; MTSA's per-head bias [heads, 1, n]).
// Where the float32 GEMM is the engine's own, the bias is added and the relu
// taken as the sums are stored (no pass over the output for either); its
// backward selects the gradient where the output is positive, then is
// matmul's, and the bias's gradient is that summed to its shape. Operands
// of rank >= 2.
Tensor matmul_bias(const Tensor& a, const Tensor& b, const Tensor& bias, bool relu = false);

// x [..., in] times weight [out, in] transposed, plus bias [out] when
// defined: one GEMM over all leading axes of x, with the bias folded into it
// (the op "linear": no activation).
Tensor linear_unactivated(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor());

// relu(linear(x, weight, bias)) as one op: where the float32 GEMM is the
// engine's own the relu is taken as the sums are stored (no second pass
// over the output), elsewhere it is a pass in place. Its backward selects
// the gradient where the output is positive (as relu's does), then is
// linear's.
Tensor linear_relu(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor());

// sum_i xs[i] [..., in_i] times weights[i] [out, in_i] transposed, plus bias
// [out] when defined. All xs share their leading axes. One GEMM per term
// into the same output (the later ones accumulate, beta = 1), so a layer
// over a concatenation [x_1; x_2] with weight [W_1 | W_2] (column views of
// one parameter) needs no concatenated input forward and no split of its
// gradient backward, and a sum of two layers no pass to add them.
Tensor linear_sum(const std::vector<Tensor>& xs, const std::vector<Tensor>& weights, const Tensor& bias = Tensor());

}  // namespace attn
