#include "attn/ops/token_conv/token_conv.h"

#include "attn/engine/autograd.h"
#include "attn/engine/copy.h"
#include "attn/engine/kernel_table.h"
#include "attn/ops/binary/binary.h"
#include "attn/ops/matmul/matmul.h"
#include "attn/ops/token_conv/token_conv_kernels.h"
#include "attn/ops/view/view.h"

namespace attn {

namespace {

using ForwardFn = void (*)(const Tensor&, const Tensor&, int64_t, const Tensor&);
using BackwardFn = void (*)(const Tensor&, const Tensor&, int64_t, const Tensor&);
const DeviceKernels<ForwardFn> kForward{"token_unfold", token_unfold_cpu, ATTN_CUDA_KERNEL(token_unfold_cuda)};
const DeviceKernels<BackwardFn> kBackward{"token_unfold_backward", token_unfold_backward_cpu,
                                          ATTN_CUDA_KERNEL(token_unfold_backward_cuda)};

std::string describe(const Tensor& t) {
  return t.defined() ? std::string(dtype_name(t.dtype())) + " " + shape_str(t.shape()) : std::string("undefined");
}

void check_input(const char* op, const Tensor& x, const Tensor& mask) {
  ATTN_CHECK(x.defined() && is_floating(x.dtype()) && x.dim() == 3, op,
             "x must be a float32 or float64 tensor [B, n, d], got ", describe(x));
  if (!mask.defined()) return;
  ATTN_CHECK(mask.dtype() == DType::U8 && mask.shape() == Shape({x.size(0), x.size(1)}), op, "mask must be uint8 [",
             x.size(0), ", ", x.size(1), "] for x ", shape_str(x.shape()), ", got ", describe(mask));
  ATTN_CHECK(mask.device() == x.device(), op, "mask is on ", device_name(mask.device()), ", x on ",
             device_name(x.device()));
}

}  // namespace

Tensor token_unfold(const Tensor& x, const Tensor& mask, int64_t width) {
  check_input("token_unfold", x, mask);
  ATTN_CHECK(width >= 1, "token_unfold", "the kernel width must be at least 1, got ", width);
  const int64_t left = (width - 1) / 2;
  const Tensor xs = contiguous(x);
  const Tensor m = mask.defined() ? contiguous(mask) : Tensor();
  Tensor cols = empty({x.size(0), x.size(1), width, x.size(2)}, x.dtype(), x.device());
  kForward(x.device(), xs, m, left, cols);
  if (!any_requires_grad({x})) return cols;

  const Shape x_shape = x.shape();
  const DType dtype = x.dtype();
  const Device device = x.device();
  record(cols, "token_unfold", {x}, {m}, [m, left, x_shape, dtype, device](const Tensor& g, const std::vector<bool>&) {
    Tensor grad_x = empty(x_shape, dtype, device);
    kBackward(device, contiguous(g), m, left, grad_x);
    return std::vector<Tensor>{grad_x};
  });
  return cols;
}

Tensor token_conv(const Tensor& x, const Tensor& mask, const Tensor& weight, const Tensor& bias, Activation act) {
  constexpr const char* kOp = "token_conv";
  check_input(kOp, x, mask);
  ATTN_CHECK(weight.defined() && weight.dim() == 3 && weight.size(1) == x.size(2) && weight.size(0) >= 1, kOp,
             "weight must be [k, d_in, d_out] with d_in = ", x.size(2), " (x ", shape_str(x.shape()), "), got ",
             describe(weight));
  ATTN_CHECK(weight.dtype() == x.dtype() && weight.device() == x.device(), kOp, "weight is ",
             dtype_name(weight.dtype()), " on ", device_name(weight.device()), ", x is ", dtype_name(x.dtype()), " on ",
             device_name(x.device()));
  const int64_t k = weight.size(0), d_in = weight.size(1), d_out = weight.size(2);
  if (bias.defined())
    ATTN_CHECK(bias.shape() == Shape({d_out}) && bias.dtype() == x.dtype() && bias.device() == x.device(), kOp,
               "bias must be ", dtype_name(x.dtype()), " [", d_out, "] on ", device_name(x.device()), " for weight ",
               shape_str(weight.shape()), ", got ", describe(bias));
  const int64_t B = x.size(0), n = x.size(1);
  // [B, n, k, d_in] read as [B, n, k d_in] is a view; the weight's taps
  // stacked as [k d_in, d_out] match it row for row.
  const Tensor cols = reshape(token_unfold(x, mask, k), {B, n, k * d_in});
  Tensor y = matmul(cols, reshape(weight, {k * d_in, d_out}), bias, act);
  if (!mask.defined()) return y;
  // The bias (and act of it) alone reached the padded rows, whose windows
  // are all zero; they are selected to exactly zero, which also stops their
  // gradient.
  const Tensor pad = eq(unsqueeze(mask, -1), zeros({}, DType::U8, mask.device()));
  return masked_fill(y, pad, 0.0);
}

}  // namespace attn
