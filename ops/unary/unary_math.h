// Value and derivative of each unary op, written once for every device
// (host and device qualifiers when compiled by nvcc). Derivatives take the
// input x and the output y, so each uses whichever is cheaper.
#pragma once
#include <cmath>

#include "attn/ops/host_device.h"
#include "attn/ops/unary/unary.h"

namespace attn {
namespace unary_math {

template <class T> ATTN_HD T stable_sigmoid(T x) {
  if (x >= T(0)) return T(1) / (T(1) + std::exp(-x));
  T e = std::exp(x);
  return e / (T(1) + e);
}

// f(x, a, b) and df(x, y, a, b) for each op. A gate's derivative is 1
// where the input passes and 0 where it is cut off: there the backward
// selects 0 instead of multiplying (chain below), so a NaN or Inf gradient
// at a cut-off element does not become NaN (0 * NaN), as with a mask.
#define ATTN_UNARY_KIND(Name, is_gate, value_expr, deriv_expr)           \
  struct Name {                                                           \
    static constexpr bool gate = is_gate;                                 \
    template <class T> ATTN_HD static T f(T x, T a, T b) {                \
      (void)a; (void)b;                                                   \
      return value_expr;                                                  \
    }                                                                     \
    template <class T> ATTN_HD static T df(T x, T y, T a, T b) {          \
      (void)x; (void)y; (void)a; (void)b;                                 \
      return deriv_expr;                                                  \
    }                                                                     \
  };
#define ATTN_UNARY(Name, value_expr, deriv_expr) ATTN_UNARY_KIND(Name, false, value_expr, deriv_expr)
#define ATTN_UNARY_GATE(Name, value_expr, passes_expr) \
  ATTN_UNARY_KIND(Name, true, value_expr, (passes_expr) ? T(1) : T(0))

ATTN_UNARY(Neg, -x, T(-1))
ATTN_UNARY(Exp, std::exp(x), y)
ATTN_UNARY(Log, std::log(x), T(1) / x)
ATTN_UNARY(Sqrt, std::sqrt(x), T(0.5) / y)
ATTN_UNARY(Abs, std::abs(x), x > T(0) ? T(1) : (x < T(0) ? T(-1) : T(0)))
ATTN_UNARY(Tanh, std::tanh(x), T(1) - y * y)
ATTN_UNARY(Sigmoid, stable_sigmoid(x), y * (T(1) - y))
// log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)): no overflow for any x.
ATTN_UNARY(LogSigmoid, (x < T(0) ? x : T(0)) - std::log1p(std::exp(-std::abs(x))), stable_sigmoid(-x))
// NaN passes through (x <= 0 is false for NaN): a relu never hides one.
ATTN_UNARY_GATE(Relu, x <= T(0) ? T(0) : x, y > T(0))
ATTN_UNARY(Elu, x > T(0) ? x : a * (std::exp(x) - T(1)), y > T(0) ? T(1) : y + a)
// log(1 + exp(x)) = max(x, 0) + log1p(exp(-|x|)).
ATTN_UNARY(Softplus, (x > T(0) ? x : T(0)) + std::log1p(std::exp(-std::abs(x))), stable_sigmoid(x))
ATTN_UNARY(AddScalar, x + a, T(1))
ATTN_UNARY(MulScalar, x * a, a)
ATTN_UNARY(PowScalar, std::pow(x, a), a * std::pow(x, a - T(1)))
ATTN_UNARY_GATE(Clamp, x < a ? a : (x > b ? b : x), x >= a && x <= b)

#undef ATTN_UNARY_GATE
#undef ATTN_UNARY
#undef ATTN_UNARY_KIND

// The gradient of the input: grad * f'(x), or for a gate grad where it
// passes and exactly 0 where it is cut off.
template <class M, class T> ATTN_HD T chain(T grad, T x, T y, T a, T b) {
  const T d = M::df(x, y, a, b);
  if (M::gate) return d != T(0) ? grad : T(0);
  return grad * d;
}

// Calls f(OpStruct{}) for a runtime UnaryOp, so kernels get one tight loop per op.
template <class F> auto visit(UnaryOp op, const F& f) {
  switch (op) {
#define ATTN_UNARY_CASE(Enum, name, reads) \
  case UnaryOp::Enum: return f(Enum{});
    ATTN_UNARY_OPS(ATTN_UNARY_CASE)
#undef ATTN_UNARY_CASE
    case UnaryOp::Count: break;
  }
  return f(Neg{});
}

}  // namespace unary_math
}  // namespace attn
