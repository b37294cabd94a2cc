// Elementwise unary ops. Each is one entry of UnaryOp: a value formula and a
// derivative formula (ops/unary_math.h) shared by every device's kernels.
#pragma once
#include "engine/tensor.h"

namespace attn {

enum class UnaryOp : uint8_t {
  Neg, Exp, Log, Sqrt, Abs, Tanh, Sigmoid, LogSigmoid, Relu, Elu, Softplus,
  AddScalar, MulScalar, PowScalar, Clamp,
  Count
};

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

}  // namespace attn
