// Elementwise binary ops with NumPy broadcasting, comparisons (no gradient),
// and selection by a mask (where, masked_fill).
#pragma once
#include "attn/engine/tensor.h"

namespace attn {

// The one list of binary ops: X(Enum, "name"). The enum, the names and the
// kernels' dispatch (ops/binary/binary_math.h) are generated from it; each op also
// needs a formula in binary_math.h, a backward in binary.cpp and gradcheck
// samples in ops/binary/binary_samples.cpp (a test fails without them).
#define ATTN_BINARY_OPS(X) \
  X(Add, "add")            \
  X(Sub, "sub")            \
  X(Mul, "mul")            \
  X(Div, "div")            \
  X(Maximum, "maximum")    \
  X(Minimum, "minimum")

enum class BinaryOp : uint8_t {
#define ATTN_BINARY_ENUM(Enum, name) Enum,
  ATTN_BINARY_OPS(ATTN_BINARY_ENUM)
#undef ATTN_BINARY_ENUM
  Count
};
// Adding an op: extend ATTN_BINARY_OPS, binary_math.h, the backward and the samples, then this count.
static_assert(static_cast<int>(BinaryOp::Count) == 6, "a new binary op needs its formula and gradcheck samples");
enum class CompareOp : uint8_t { Eq, Ne, Lt, Le, Gt, Ge, Count };

const char* binary_op_name(BinaryOp op);
const char* compare_op_name(CompareOp op);

Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b);
Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);

// uint8 results (1 where the relation holds); never recorded on the tape.
Tensor compare(CompareOp op, const Tensor& a, const Tensor& b);
Tensor eq(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, const Tensor& b);

// cond ? a : b elementwise (cond uint8, all three broadcast). The gradient
// of the branch not taken is exactly zero: values there never reach it.
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
// x with `value` wherever mask (uint8, broadcast to x) is nonzero.
Tensor masked_fill(const Tensor& x, const Tensor& mask, double value);

// In place, not recorded (optimizer updates): dst += alpha * src.
void axpy_(const Tensor& dst, double alpha, const Tensor& src);

Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a);
Tensor operator+(const Tensor& a, double c);
Tensor operator-(const Tensor& a, double c);
Tensor operator*(const Tensor& a, double c);
Tensor operator/(const Tensor& a, double c);
Tensor operator+(double c, const Tensor& a);
Tensor operator*(double c, const Tensor& a);
Tensor operator-(double c, const Tensor& a);

}  // namespace attn
