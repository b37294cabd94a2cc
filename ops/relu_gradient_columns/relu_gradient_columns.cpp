#include "attn/ops/relu_gradient_columns/relu_gradient_columns.h"

#include "attn/engine/copy.h"
#include "attn/engine/kernel_table.h"
#include "attn/ops/relu_gradient_columns/relu_gradient_columns_kernels.h"

namespace attn {

namespace {

constexpr const char* kOp = "relu_gradient_columns";
using KernelFn = void (*)(const Tensor&, const Tensor&, const Tensor&, const Tensor&);
const DeviceKernels<KernelFn> kKernel{kOp, relu_gradient_columns_cpu, ATTN_CUDA_KERNEL(relu_gradient_columns_cuda)};

}  // namespace

ReluGradientColumns relu_gradient_columns(const Tensor& grad, const Tensor& output, bool in_place) {
  ATTN_CHECK(grad.defined() && output.defined() && grad.dim() == 2 && grad.shape() == output.shape(), kOp,
             "grad and output must both be [rows, cols], got ",
             grad.defined() ? shape_str(grad.shape()) : std::string("undefined"), " and ",
             output.defined() ? shape_str(output.shape()) : std::string("undefined"));
  ATTN_CHECK(is_floating(grad.dtype()) && grad.dtype() == output.dtype() && grad.device() == output.device(), kOp,
             "grad is ", dtype_name(grad.dtype()), " on ", device_name(grad.device()), ", output is ",
             dtype_name(output.dtype()), " on ", device_name(output.device()), ": expected one floating dtype and device");
  ATTN_CHECK(!in_place || grad.is_contiguous(), kOp, "an in-place select needs a contiguous grad");
  ReluGradientColumns r;
  r.grad_in = in_place ? grad : empty(grad.shape(), grad.dtype(), grad.device());
  r.column_sums = empty({grad.size(1)}, grad.dtype(), grad.device());
  kKernel(grad.device(), contiguous(grad.detach()), contiguous(output.detach()), r.grad_in, r.column_sums);
  return r;
}

}  // namespace attn
