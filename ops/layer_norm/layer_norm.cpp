#include "attn/ops/layer_norm/layer_norm.h"

#include <cmath>

#include "attn/engine/autograd.h"
#include "attn/engine/kernel_table.h"
#include "attn/engine/copy.h"
#include "attn/ops/layer_norm/layer_norm_kernels.h"

namespace attn {

namespace {

using ForwardFn = void (*)(const Tensor&, const Tensor&, const Tensor&, double, int64_t, int64_t, const Tensor&,
                           const Tensor&, const Tensor&);
using BackwardKernelFn = void (*)(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, int64_t,
                                  int64_t, const Tensor&, const Tensor&, const Tensor&);
const DeviceKernels<ForwardFn> kForward{"layer_norm", layer_norm_forward_cpu,
                                        ATTN_CUDA_KERNEL(layer_norm_forward_cuda)};
const DeviceKernels<BackwardKernelFn> kBackward{"layer_norm_backward", layer_norm_backward_cpu,
                                                ATTN_CUDA_KERNEL(layer_norm_backward_cuda)};

// gamma or beta, when given, must be a [D] vector matching x's dtype and device.
void check_affine(const char* which, const Tensor& p, const Tensor& x) {
  if (!p.defined()) return;
  const int64_t D = x.size(-1);
  ATTN_CHECK(p.shape() == Shape{D}, "layer_norm", which, " of shape ", shape_str(p.shape()),
             " does not match the normalised (last) axis of input shape ", shape_str(x.shape()), ": expected ",
             shape_str({D}));
  ATTN_CHECK(p.dtype() == x.dtype(), "layer_norm", which, " is ", dtype_name(p.dtype()), " but the input is ",
             dtype_name(x.dtype()));
  ATTN_CHECK(p.device() == x.device(), "layer_norm", which, " on ", device_name(p.device()), ", input on ",
             device_name(x.device()));
}

// The kernels read contiguous, history-free operands.
Tensor plain(const Tensor& t) { return t.defined() ? contiguous(t.detach()) : Tensor(); }

}  // namespace

Tensor layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps) {
  ATTN_CHECK(is_floating(x.dtype()), "layer_norm", "expects float32 or float64, got ", dtype_name(x.dtype()),
             " for input of shape ", shape_str(x.shape()));
  ATTN_CHECK(x.dim() >= 1 && x.size(-1) > 0, "layer_norm", "needs a non-empty last axis to normalise, got shape ",
             shape_str(x.shape()));
  ATTN_CHECK(std::isfinite(eps) && eps >= 0, "layer_norm", "eps must be finite and non-negative, got ", eps);
  check_affine("gamma", gamma, x);
  check_affine("beta", beta, x);

  const int64_t D = x.size(-1);
  const int64_t rows = x.numel() / D;
  Tensor xs = plain(x), gs = plain(gamma), bs = plain(beta);
  Tensor out = empty(x.shape(), x.dtype(), x.device());
  Tensor mean = empty({rows}, x.dtype(), x.device());
  Tensor rstd = empty({rows}, x.dtype(), x.device());
  kForward(x.device(), xs, gs, bs, eps, rows, D, out, mean, rstd);
  if (!any_requires_grad({x, gamma, beta})) return out;

  record(out, "layer_norm", {x, gamma, beta}, {xs, gs, mean, rstd},
         [xs, gs, mean, rstd, rows, D](const Tensor& g, const std::vector<bool>& needs) {
           Tensor gx = needs[0] ? empty(xs.shape(), g.dtype(), g.device()) : Tensor();
           Tensor gg = needs[1] ? empty({D}, g.dtype(), g.device()) : Tensor();
           Tensor gb = needs[2] ? empty({D}, g.dtype(), g.device()) : Tensor();
           kBackward(g.device(), contiguous(g), xs, gs, mean, rstd, rows, D, gx, gg, gb);
           return std::vector<Tensor>{gx, gg, gb};
         });
  return out;
}

}  // namespace attn
