// Value formulas of the binary and comparison ops, shared by every device.
#pragma once
#include "attn/ops/binary/binary.h"
#include "attn/ops/unary/unary_math.h"

namespace attn {
namespace binary_math {

struct Add { template <class T> ATTN_HD static T f(T a, T b) { return a + b; } };
struct Sub { template <class T> ATTN_HD static T f(T a, T b) { return a - b; } };
struct Mul { template <class T> ATTN_HD static T f(T a, T b) { return a * b; } };
struct Div { template <class T> ATTN_HD static T f(T a, T b) { return a / b; } };
struct Maximum { template <class T> ATTN_HD static T f(T a, T b) { return a >= b ? a : b; } };
struct Minimum { template <class T> ATTN_HD static T f(T a, T b) { return a <= b ? a : b; } };

template <class F> auto visit(BinaryOp op, const F& f) {
  switch (op) {
#define ATTN_BINARY_CASE(Enum, name) \
  case BinaryOp::Enum: return f(Enum{});
    ATTN_BINARY_OPS(ATTN_BINARY_CASE)
#undef ATTN_BINARY_CASE
    case BinaryOp::Count: break;
  }
  return f(Add{});
}

struct Eq { template <class T> ATTN_HD static bool f(T a, T b) { return a == b; } };
struct Ne { template <class T> ATTN_HD static bool f(T a, T b) { return a != b; } };
struct Lt { template <class T> ATTN_HD static bool f(T a, T b) { return a < b; } };
struct Le { template <class T> ATTN_HD static bool f(T a, T b) { return a <= b; } };
struct Gt { template <class T> ATTN_HD static bool f(T a, T b) { return a > b; } };
struct Ge { template <class T> ATTN_HD static bool f(T a, T b) { return a >= b; } };

template <class F> auto visit(CompareOp op, const F& f) {
  switch (op) {
    case CompareOp::Eq: return f(Eq{});
    case CompareOp::Ne: return f(Ne{});
    case CompareOp::Lt: return f(Lt{});
    case CompareOp::Le: return f(Le{});
    case CompareOp::Gt: return f(Gt{});
    case CompareOp::Ge: return f(Ge{});
    case CompareOp::Count: break;
  }
  return f(Eq{});
}

}  // namespace binary_math
}  // namespace attn
