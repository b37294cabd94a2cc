// Elementwise unary ops. Each is one entry of UnaryOp: a value formula and a
// derivative formula (ops/unary/unary_math.h) shared by every device's kernels.
#pragma once
#include "attn/engine/tensor.h"

namespace attn {

// The one list of unary ops: X(Enum, "name", what the derivative reads: None,
// Input or Output). The enum, the names, the kernels' dispatch
// (ops/unary/unary_math.h) and the backward's saved tensors are generated from it;
// each op also needs a formula in unary_math.h and gradcheck samples in
// ops/unary/unary_samples.cpp (a test fails without them).
#define ATTN_UNARY_OPS(X)             \
  X(Neg, "neg", None)                 \
  X(Exp, "exp", Output)               \
  X(Log, "log", Input)                \
  X(Sqrt, "sqrt", Output)             \
  X(Abs, "abs", Input)                \
  X(Tanh, "tanh", Output)             \
  X(Sigmoid, "sigmoid", Output)       \
  X(LogSigmoid, "log_sigmoid", Input) \
  X(Relu, "relu", Output)             \
  X(Elu, "elu", Output)               \
  X(Softplus, "softplus", Input)      \
  X(AddScalar, "add_scalar", None)    \
  X(MulScalar, "mul_scalar", None)    \
  X(PowScalar, "pow_scalar", Input)   \
  X(Clamp, "clamp", Input)

enum class UnaryOp : uint8_t {
#define ATTN_UNARY_ENUM(Enum, name, reads) Enum,
  ATTN_UNARY_OPS(ATTN_UNARY_ENUM)
#undef ATTN_UNARY_ENUM
  Count
};
// Adding an op: extend ATTN_UNARY_OPS, unary_math.h and unary_samples.cpp, then this count.
static_assert(static_cast<int>(UnaryOp::Count) == 15, "a new unary op needs its formula and gradcheck samples");

const char* unary_op_name(UnaryOp op);

// Scalar parameters some ops take (elu alpha, the scalar of add/mul/pow, clamp bounds).
struct UnaryParams {
  double a = 0;
  double b = 0;
};

Tensor unary(UnaryOp op, const Tensor& x, UnaryParams params = {});

Tensor neg(const Tensor& x);
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor abs(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor sigmoid(const Tensor& x);
Tensor log_sigmoid(const Tensor& x);
Tensor relu(const Tensor& x);
Tensor elu(const Tensor& x, double alpha = 1.0);
Tensor softplus(const Tensor& x);
Tensor add_scalar(const Tensor& x, double c);
Tensor mul_scalar(const Tensor& x, double c);
Tensor pow_scalar(const Tensor& x, double exponent);
Tensor clamp(const Tensor& x, double lo, double hi);

// relu's backward on its own, for ops that fuse a relu into their forward
// pass (linear_relu): grad where output > 0, exactly 0 elsewhere. Not
// differentiable itself.
Tensor relu_gradient(const Tensor& grad, const Tensor& output);

}  // namespace attn
