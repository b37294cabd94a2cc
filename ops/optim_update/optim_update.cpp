#include "attn/ops/optim_update/optim_update.h"

#include <cmath>

#include "attn/engine/copy.h"
#include "attn/engine/error.h"
#include "attn/engine/kernel_table.h"
#include "attn/ops/optim_update/optim_update_kernels.h"

namespace attn {

namespace {

using AdamFn = void (*)(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const optim_math::AdamStep&);
using AdadeltaFn = void (*)(const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                            const optim_math::AdadeltaStep&);
using MomentumFn = void (*)(const Tensor&, const Tensor&, const Tensor&, const optim_math::MomentumStep&);
const DeviceKernels<AdamFn> kAdam{"adam_update_", adam_update_cpu, ATTN_CUDA_KERNEL(adam_update_cuda)};
const DeviceKernels<AdadeltaFn> kAdadelta{"adadelta_update_", adadelta_update_cpu,
                                          ATTN_CUDA_KERNEL(adadelta_update_cuda)};
const DeviceKernels<MomentumFn> kMomentum{"sgd_momentum_update_", momentum_update_cpu,
                                          ATTN_CUDA_KERNEL(momentum_update_cuda)};

// Checks that `t` (named `what`) can be rewritten in place alongside the parameter.
void check_like_param(const char* op, const Tensor& param, const Tensor& t, const char* what) {
  ATTN_CHECK(t.shape() == param.shape() && t.dtype() == param.dtype() && t.device() == param.device(), op, what,
             " is ", shape_str(t.shape()), " ", dtype_name(t.dtype()), " on ", device_name(t.device()),
             " but the parameter is ", shape_str(param.shape()), " ", dtype_name(param.dtype()), " on ",
             device_name(param.device()));
  ATTN_CHECK(t.is_contiguous(), op, what, " of shape ", shape_str(t.shape()), " must be contiguous");
}

// The gradient as the kernels read it: checked, and contiguous.
Tensor checked_grad(const char* op, const Tensor& param, const Tensor& grad, std::initializer_list<Tensor> state,
                    std::initializer_list<const char*> names) {
  ATTN_CHECK(is_floating(param.dtype()), op, "expects float32 or float64, got ", dtype_name(param.dtype()));
  check_like_param(op, param, param, "parameter");
  auto name = names.begin();
  for (const Tensor& s : state) check_like_param(op, param, s, *name++);
  ATTN_CHECK(grad.shape() == param.shape() && grad.dtype() == param.dtype() && grad.device() == param.device(), op,
             "gradient is ", shape_str(grad.shape()), " ", dtype_name(grad.dtype()), " but the parameter is ",
             shape_str(param.shape()), " ", dtype_name(param.dtype()));
  return grad.is_contiguous() ? grad : contiguous(grad);
}

}  // namespace

void adam_update_(const Tensor& param, const Tensor& grad, const Tensor& m, const Tensor& v, const AdamHyper& h) {
  const Tensor g = checked_grad("adam_update_", param, grad, {m, v}, {"m", "v"});
  ATTN_CHECK(h.t >= 1, "adam_update_", "step must be >= 1, got ", h.t);
  const double c1 = 1 - std::pow(h.beta1, static_cast<double>(h.t));
  const double c2 = 1 - std::pow(h.beta2, static_cast<double>(h.t));
  kAdam(param.device(), param, g, m, v, optim_math::AdamStep{h.beta1, h.beta2, h.eps, h.lr / c1, 1.0 / std::sqrt(c2)});
}

void adadelta_update_(const Tensor& param, const Tensor& grad, const Tensor& accum, const Tensor& accum_update,
                      double lr, double rho, double eps) {
  const Tensor g = checked_grad("adadelta_update_", param, grad, {accum, accum_update}, {"accum", "accum_update"});
  kAdadelta(param.device(), param, g, accum, accum_update, optim_math::AdadeltaStep{lr, rho, eps});
}

void sgd_momentum_update_(const Tensor& param, const Tensor& grad, const Tensor& velocity, double lr,
                          double momentum) {
  const Tensor g = checked_grad("sgd_momentum_update_", param, grad, {velocity}, {"velocity"});
  kMomentum(param.device(), param, g, velocity, optim_math::MomentumStep{lr, momentum});
}

}  // namespace attn
