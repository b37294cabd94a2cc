// The activations a layer may end in, as one argument the products of
// ops/matmul/matmul.h take: there the choice of kernel (a relu taken as the
// GEMM stores its sums, or a pass after it) is made per call.
#pragma once
#include "attn/engine/tensor.h"

namespace attn {

enum class Activation { None, Relu, Elu, Tanh, Sigmoid };

// relu, elu (alpha 1), tanh or sigmoid of x as the unary ops; x itself for None.
Tensor activate(Activation a, const Tensor& x);

}  // namespace attn
