#include "attn/ops/modulated_linear/modulated_linear.h"

#include "attn/engine/autograd.h"
#include "attn/engine/copy.h"
#include "attn/engine/kernel_table.h"
#include "attn/ops/modulated_linear/modulated_linear_kernels.h"

namespace attn {

namespace {

constexpr const char* kOp = "modulated_linear";

using ForwardFn = void (*)(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&);
using BackwardFn = void (*)(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                            const Tensor&, const Tensor&, const Tensor&);
const DeviceKernels<ForwardFn> kForward{kOp, modulated_linear_cpu, ATTN_CUDA_KERNEL(modulated_linear_cuda)};
const DeviceKernels<BackwardFn> kBackward{"modulated_linear_backward", modulated_linear_backward_cpu,
                                          ATTN_CUDA_KERNEL(modulated_linear_backward_cuda)};

std::string describe(const Tensor& t) {
  return t.defined()
             ? dtype_name(t.dtype()) + std::string(" ") + shape_str(t.shape()) + " on " + device_name(t.device())
             : std::string("an undefined tensor");
}

void check_operands(const Tensor& x, const Tensor& scale, const Tensor& weight, const Tensor& scaled_weight) {
  ATTN_CHECK(x.defined() && is_floating(x.dtype()) && x.dim() == 3, kOp,
             "x must be a float32 or float64 tensor [B, n, d], got ", describe(x));
  const int64_t B = x.size(0), d = x.size(2);
  ATTN_CHECK(scale.defined() && scale.shape() == Shape({B, d}), kOp, "scale must be [", B, ", ", d,
             "] (one vector per sentence of x ", shape_str(x.shape()), "), got ", describe(scale));
  ATTN_CHECK(weight.defined() && weight.dim() == 2 && weight.size(1) == d, kOp, "weight must be [h, ", d, "] for x ",
             shape_str(x.shape()), ", got ", describe(weight));
  ATTN_CHECK(scaled_weight.defined() && scaled_weight.shape() == weight.shape(), kOp,
             "scaled_weight must match weight ", shape_str(weight.shape()), ", got ", describe(scaled_weight));
  for (const Tensor* t : {&scale, &weight, &scaled_weight})
    ATTN_CHECK(t->dtype() == x.dtype() && t->device() == x.device(), kOp, "operands must share x's dtype and device (",
               describe(x), "), got ", describe(*t));
}

}  // namespace

Tensor modulated_linear(const Tensor& x, const Tensor& scale, const Tensor& weight, const Tensor& scaled_weight) {
  check_operands(x, scale, weight, scaled_weight);
  const Tensor xc = contiguous(x), sc = contiguous(scale), wc = contiguous(weight), vc = contiguous(scaled_weight);
  Tensor out = empty({x.size(0), x.size(1), weight.size(0)}, x.dtype(), x.device());
  kForward(x.device(), xc, sc, wc, vc, out);
  if (!any_requires_grad({x, scale, weight, scaled_weight})) return out;

  const Tensor xs = xc.detach(), ss = sc.detach(), ws = wc.detach(), vs = vc.detach();
  record(out, kOp, {x, scale, weight, scaled_weight}, {xs, ss, ws, vs},
         [xs, ss, ws, vs](const Tensor& g, const std::vector<bool>& needs) {
           auto grad_like = [](bool need, const Tensor& t) {
             return need ? empty(t.shape(), t.dtype(), t.device()) : Tensor();
           };
           std::vector<Tensor> grads{grad_like(needs[0], xs), grad_like(needs[1], ss), grad_like(needs[2], ws),
                                     grad_like(needs[3], vs)};
           kBackward(xs.device(), contiguous(g), xs, ss, ws, vs, grads[0], grads[1], grads[2], grads[3]);
           return grads;
         });
  return out;
}

}  // namespace attn
