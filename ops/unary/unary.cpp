#include "attn/ops/unary/unary.h"

#include "attn/engine/autograd.h"
#include "attn/engine/kernel_table.h"
#include "attn/ops/unary/unary_kernels.h"

namespace attn {

namespace {

constexpr const char* kUnaryNames[] = {
#define ATTN_UNARY_NAME(Enum, name, reads) name,
    ATTN_UNARY_OPS(ATTN_UNARY_NAME)
#undef ATTN_UNARY_NAME
};
static_assert(sizeof(kUnaryNames) / sizeof(kUnaryNames[0]) == static_cast<size_t>(UnaryOp::Count),
              "kUnaryNames must list every UnaryOp");

using ForwardFn = void (*)(UnaryOp, UnaryParams, const Tensor&, const Tensor&);
using BackwardKernelFn = void (*)(UnaryOp, UnaryParams, const Tensor&, const Tensor&, const Tensor&, const Tensor&);
const DeviceKernels<ForwardFn> kForward{"unary", unary_forward_cpu, ATTN_CUDA_KERNEL(unary_forward_cuda)};
const DeviceKernels<BackwardKernelFn> kBackward{"unary_backward", unary_backward_cpu,
                                                ATTN_CUDA_KERNEL(unary_backward_cuda)};

// Which saved tensor each derivative reads (ops/unary/unary_math.h); the backward
// keeps only those alive.
enum class Reads { None, Input, Output };
constexpr Reads kDerivativeReads[] = {
#define ATTN_UNARY_READS(Enum, name, reads) Reads::reads,
    ATTN_UNARY_OPS(ATTN_UNARY_READS)
#undef ATTN_UNARY_READS
};
bool derivative_reads_input(UnaryOp op) { return kDerivativeReads[static_cast<int>(op)] == Reads::Input; }
bool derivative_reads_output(UnaryOp op) { return kDerivativeReads[static_cast<int>(op)] == Reads::Output; }

}  // namespace

const char* unary_op_name(UnaryOp op) { return kUnaryNames[static_cast<int>(op)]; }

Tensor unary(UnaryOp op, const Tensor& x, UnaryParams params) {
  const char* name = unary_op_name(op);
  ATTN_CHECK(is_floating(x.dtype()), name, "expects float32 or float64, got ", dtype_name(x.dtype()));
  Tensor out = empty(x.shape(), x.dtype(), x.device());
  kForward(x.device(), op, params, x, out);
  if (!any_requires_grad({x})) return out;
  Tensor xs = derivative_reads_input(op) ? x.detach() : Tensor();
  Tensor ys = derivative_reads_output(op) ? out.detach() : Tensor();
  record(out, name, {x}, {xs, ys}, [op, params, xs, ys](const Tensor& g, const std::vector<bool>&) {
    // An unread operand is stood in for by g: same shape, never used.
    Tensor gi = empty(g.shape(), g.dtype(), g.device());
    kBackward(g.device(), op, params, xs.defined() ? xs : g, ys.defined() ? ys : g, g, gi);
    return std::vector<Tensor>{gi};
  });
  return out;
}

Tensor relu_gradient(const Tensor& grad, const Tensor& output) {
  ATTN_CHECK(grad.defined() && output.defined() && grad.shape() == output.shape() &&
                 grad.dtype() == output.dtype() && grad.device() == output.device(),
             "relu_gradient", "grad and output must match in shape, dtype and device");
  Tensor gi = empty(grad.shape(), grad.dtype(), grad.device());
  kBackward(grad.device(), UnaryOp::Relu, UnaryParams{}, output, output, grad, gi);
  return gi;
}

Tensor neg(const Tensor& x) { return unary(UnaryOp::Neg, x); }
Tensor exp(const Tensor& x) { return unary(UnaryOp::Exp, x); }
Tensor log(const Tensor& x) { return unary(UnaryOp::Log, x); }
Tensor sqrt(const Tensor& x) { return unary(UnaryOp::Sqrt, x); }
Tensor abs(const Tensor& x) { return unary(UnaryOp::Abs, x); }
Tensor tanh(const Tensor& x) { return unary(UnaryOp::Tanh, x); }
Tensor sigmoid(const Tensor& x) { return unary(UnaryOp::Sigmoid, x); }
Tensor log_sigmoid(const Tensor& x) { return unary(UnaryOp::LogSigmoid, x); }
Tensor relu(const Tensor& x) { return unary(UnaryOp::Relu, x); }
Tensor elu(const Tensor& x, double alpha) { return unary(UnaryOp::Elu, x, {alpha, 0}); }
Tensor softplus(const Tensor& x) { return unary(UnaryOp::Softplus, x); }
Tensor add_scalar(const Tensor& x, double c) { return unary(UnaryOp::AddScalar, x, {c, 0}); }
Tensor mul_scalar(const Tensor& x, double c) { return unary(UnaryOp::MulScalar, x, {c, 0}); }
Tensor pow_scalar(const Tensor& x, double exponent) { return unary(UnaryOp::PowScalar, x, {exponent, 0}); }
Tensor clamp(const Tensor& x, double lo, double hi) {
  ATTN_CHECK(lo <= hi, "clamp", "lower bound ", lo, " is above upper bound ", hi);
  return unary(UnaryOp::Clamp, x, {lo, hi});
}

}  // namespace attn
