#include "attn/ops/binary/binary.h"

#include <algorithm>

#include "attn/engine/autograd.h"
#include "attn/engine/kernel_table.h"
#include "attn/ops/binary/binary_kernels.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/ops/unary/unary.h"

namespace attn {

namespace {

constexpr const char* kBinaryNames[] = {
#define ATTN_BINARY_NAME(Enum, name) name,
    ATTN_BINARY_OPS(ATTN_BINARY_NAME)
#undef ATTN_BINARY_NAME
};
static_assert(sizeof(kBinaryNames) / sizeof(kBinaryNames[0]) == static_cast<size_t>(BinaryOp::Count),
              "kBinaryNames must list every BinaryOp");
constexpr const char* kCompareNames[] = {"eq", "ne", "lt", "le", "gt", "ge"};
static_assert(sizeof(kCompareNames) / sizeof(kCompareNames[0]) == static_cast<size_t>(CompareOp::Count),
              "kCompareNames must list every CompareOp");

using BinaryFn = void (*)(BinaryOp, const Tensor&, const Tensor&, const Tensor&);
using CompareFn = void (*)(CompareOp, const Tensor&, const Tensor&, const Tensor&);
using WhereFn = void (*)(const Tensor&, const Tensor&, const Tensor&, const Tensor&);
using AxpyFn = void (*)(const Tensor&, double, const Tensor&);
const DeviceKernels<BinaryFn> kBinary{"binary", binary_forward_cpu, ATTN_CUDA_KERNEL(binary_forward_cuda)};
const DeviceKernels<CompareFn> kCompare{"compare", compare_cpu, ATTN_CUDA_KERNEL(compare_cuda)};
const DeviceKernels<WhereFn> kWhere{"where", where_cpu, ATTN_CUDA_KERNEL(where_cuda)};
const DeviceKernels<AxpyFn> kAxpy{"axpy_", axpy_cpu, ATTN_CUDA_KERNEL(axpy_cuda)};

void check_pair(const char* op, const Tensor& a, const Tensor& b) {
  ATTN_CHECK(a.dtype() == b.dtype(), op, "dtype mismatch: ", dtype_name(a.dtype()), " ", shape_str(a.shape()), " vs ",
             dtype_name(b.dtype()), " ", shape_str(b.shape()));
  ATTN_CHECK(a.device() == b.device(), op, "device mismatch: ", device_name(a.device()), " vs ",
             device_name(b.device()), " for shapes ", shape_str(a.shape()), " and ", shape_str(b.shape()));
}

// Gradient of a broadcast operand: the output gradient summed back to its shape.
Tensor reduce_to(const Tensor& g, const Shape& shape) { return sum_to(g, shape); }

// Whether any of n bytes is non-zero: OR-reduced in blocks (a loop the
// compiler vectorises), stopping at the first block with a set byte.
bool any_nonzero(const uint8_t* bytes, int64_t n) {
  constexpr int64_t kBlock = 4096;
  for (int64_t begin = 0; begin < n; begin += kBlock) {
    const int64_t end = std::min(n, begin + kBlock);
    uint8_t any = 0;
    for (int64_t i = begin; i < end; ++i) any |= bytes[i];
    if (any != 0) return true;
  }
  return false;
}

}  // namespace

const char* binary_op_name(BinaryOp op) { return kBinaryNames[static_cast<int>(op)]; }
const char* compare_op_name(CompareOp op) { return kCompareNames[static_cast<int>(op)]; }

Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b) {
  const char* name = binary_op_name(op);
  check_pair(name, a, b);
  ATTN_CHECK(is_floating(a.dtype()), name, "expects float32 or float64, got ", dtype_name(a.dtype()));
  Tensor out = empty(broadcast_shapes(a.shape(), b.shape(), name), a.dtype(), a.device());
  kBinary(a.device(), op, a, b, out);
  if (!any_requires_grad({a, b})) return out;

  Shape sa = a.shape(), sb = b.shape();
  // Saved only where the gradient reads them: an add or a subtract that kept
  // its operands would hold two activations alive until the backward pass.
  const bool reads_a = op == BinaryOp::Mul || op == BinaryOp::Maximum || op == BinaryOp::Minimum;
  const bool reads_b = reads_a || op == BinaryOp::Div;
  Tensor as = reads_a ? a.detach() : Tensor(), bs = reads_b ? b.detach() : Tensor();
  Tensor outs = (op == BinaryOp::Div) ? out.detach() : Tensor();
  record(out, name, {a, b}, {as, bs, outs}, [op, sa, sb, as, bs, outs](const Tensor& g, const std::vector<bool>& needs) {
    Tensor ga, gb;
    switch (op) {
      case BinaryOp::Add:
        if (needs[0]) ga = reduce_to(g, sa);
        if (needs[1]) gb = reduce_to(g, sb);
        break;
      case BinaryOp::Sub:
        if (needs[0]) ga = reduce_to(g, sa);
        if (needs[1]) gb = reduce_to(neg(g), sb);
        break;
      case BinaryOp::Mul:
        if (needs[0]) ga = reduce_to(mul(g, bs), sa);
        if (needs[1]) gb = reduce_to(mul(g, as), sb);
        break;
      case BinaryOp::Div: {
        Tensor g_over_b = div(g, bs);
        if (needs[0]) ga = reduce_to(g_over_b, sa);
        if (needs[1]) gb = reduce_to(neg(mul(g_over_b, outs)), sb);  // -g a / b^2 = -(g/b) (a/b)
        break;
      }
      case BinaryOp::Maximum:
      case BinaryOp::Minimum: {
        // The gradient goes to the operand that was chosen (a on ties).
        Tensor a_chosen = op == BinaryOp::Maximum ? ge(as, bs) : le(as, bs);
        Tensor zero = zeros({}, g.dtype(), g.device());
        if (needs[0]) ga = reduce_to(where(a_chosen, g, zero), sa);
        if (needs[1]) gb = reduce_to(where(a_chosen, zero, g), sb);
        break;
      }
      case BinaryOp::Count:
        break;
    }
    return std::vector<Tensor>{ga, gb};
  });
  return out;
}

Tensor add(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Add, a, b); }

namespace {
// The tape accumulates gradients with this add (engine/autograd.h); installed
// during static initialisation, before main runs any backward pass.
const bool gradient_adder_installed = (set_gradient_adder(add), true);
}  // namespace
Tensor sub(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Sub, a, b); }
Tensor mul(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Mul, a, b); }
Tensor div(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Div, a, b); }
Tensor maximum(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Maximum, a, b); }
Tensor minimum(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Minimum, a, b); }

Tensor compare(CompareOp op, const Tensor& a, const Tensor& b) {
  const char* name = compare_op_name(op);
  check_pair(name, a, b);
  Tensor out = empty(broadcast_shapes(a.shape(), b.shape(), name), DType::U8, a.device());
  kCompare(a.device(), op, a, b, out);
  return out;
}

Tensor eq(const Tensor& a, const Tensor& b) { return compare(CompareOp::Eq, a, b); }
Tensor ne(const Tensor& a, const Tensor& b) { return compare(CompareOp::Ne, a, b); }
Tensor lt(const Tensor& a, const Tensor& b) { return compare(CompareOp::Lt, a, b); }
Tensor le(const Tensor& a, const Tensor& b) { return compare(CompareOp::Le, a, b); }
Tensor gt(const Tensor& a, const Tensor& b) { return compare(CompareOp::Gt, a, b); }
Tensor ge(const Tensor& a, const Tensor& b) { return compare(CompareOp::Ge, a, b); }

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  ATTN_CHECK(cond.dtype() == DType::U8, "where", "condition must be uint8, got ", dtype_name(cond.dtype()), " ",
             shape_str(cond.shape()));
  check_pair("where", a, b);
  ATTN_CHECK(cond.device() == a.device(), "where", "condition on ", device_name(cond.device()), ", values on ",
             device_name(a.device()));
  Shape shape = broadcast_shapes(broadcast_shapes(cond.shape(), a.shape(), "where"), b.shape(), "where");
  Tensor out = empty(shape, a.dtype(), a.device());
  kWhere(a.device(), cond, a, b, out);
  if (!any_requires_grad({a, b})) return out;
  Shape sa = a.shape(), sb = b.shape();
  Tensor c = cond.detach();
  record(out, "where", {a, b}, {c}, [c, sa, sb](const Tensor& g, const std::vector<bool>& needs) {
    Tensor zero = zeros({}, g.dtype(), g.device());
    Tensor ga, gb;
    if (needs[0]) ga = reduce_to(where(c, g, zero), sa);
    if (needs[1]) gb = reduce_to(where(c, zero, g), sb);
    return std::vector<Tensor>{ga, gb};
  });
  return out;
}

Tensor masked_fill(const Tensor& x, const Tensor& mask, double value) {
  ATTN_CHECK(is_floating(x.dtype()), "masked_fill", "expects a floating tensor, got ", dtype_name(x.dtype()));
  Shape b = broadcast_shapes(x.shape(), mask.shape(), "masked_fill");
  ATTN_CHECK(b == x.shape(), "masked_fill", "mask of shape ", shape_str(mask.shape()),
             " does not broadcast to input shape ", shape_str(x.shape()));
  // Nothing to fill (a batch without padding): the input itself, without a
  // full-size select forward and another backward. Looked at on the CPU
  // only, where reading the mask needs no device synchronisation.
  if (mask.dtype() == DType::U8 && mask.device() == Device::CPU && x.device() == Device::CPU && mask.is_contiguous() &&
      !any_nonzero(mask.data<uint8_t>(), mask.numel()))
    return x;
  return where(mask, full({}, value, x.dtype(), x.device()), x);
}

void axpy_(const Tensor& dst, double alpha, const Tensor& src) {
  check_pair("axpy_", dst, src);
  Shape b = broadcast_shapes(dst.shape(), src.shape(), "axpy_");
  ATTN_CHECK(b == dst.shape(), "axpy_", "source of shape ", shape_str(src.shape()),
             " does not broadcast to destination shape ", shape_str(dst.shape()));
  kAxpy(dst.device(), dst, alpha, src);
}

Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor operator-(const Tensor& a) { return neg(a); }
Tensor operator+(const Tensor& a, double c) { return add_scalar(a, c); }
Tensor operator-(const Tensor& a, double c) { return add_scalar(a, -c); }
Tensor operator*(const Tensor& a, double c) { return mul_scalar(a, c); }
Tensor operator/(const Tensor& a, double c) { return mul_scalar(a, 1.0 / c); }
Tensor operator+(double c, const Tensor& a) { return add_scalar(a, c); }
Tensor operator*(double c, const Tensor& a) { return mul_scalar(a, c); }
Tensor operator-(double c, const Tensor& a) { return add_scalar(neg(a), c); }

}  // namespace attn
