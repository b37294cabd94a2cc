#include "attn/ops/softmax_pool/softmax_pool.h"

#include "attn/engine/autograd.h"
#include "attn/engine/copy.h"
#include "attn/engine/kernel_table.h"
#include "attn/ops/softmax_pool/softmax_pool_kernels.h"

namespace attn {

namespace {

constexpr const char* kOp = "softmax_pool";

using ForwardFn = void (*)(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&);
using BackwardFn = void (*)(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                            const Tensor&);
const DeviceKernels<ForwardFn> kForward{kOp, softmax_pool_cpu, ATTN_CUDA_KERNEL(softmax_pool_cuda)};
const DeviceKernels<BackwardFn> kBackward{"softmax_pool_backward", softmax_pool_backward_cpu,
                                          ATTN_CUDA_KERNEL(softmax_pool_backward_cuda)};

void check_operands(const Tensor& scores, const Tensor& values, const Tensor& mask) {
  ATTN_CHECK(scores.defined() && is_floating(scores.dtype()) && scores.dim() == 3, kOp,
             "scores must be a float32 or float64 tensor [B, n, d], got ",
             scores.defined() ? shape_str(scores.shape()) : std::string("an undefined tensor"));
  ATTN_CHECK(values.defined() && values.shape() == scores.shape(), kOp, "values ",
             values.defined() ? shape_str(values.shape()) : std::string("(undefined)"), " do not match scores ",
             shape_str(scores.shape()));
  ATTN_CHECK(values.dtype() == scores.dtype() && values.device() == scores.device(), kOp, "values are ",
             dtype_name(values.dtype()), " on ", device_name(values.device()), ", scores are ",
             dtype_name(scores.dtype()), " on ", device_name(scores.device()));
  if (!mask.defined()) return;
  ATTN_CHECK(mask.dtype() == DType::U8 && mask.shape() == Shape({scores.size(0), scores.size(1)}), kOp,
             "mask must be uint8 [", scores.size(0), ", ", scores.size(1), "], got ", dtype_name(mask.dtype()), " ",
             shape_str(mask.shape()));
  ATTN_CHECK(mask.device() == scores.device(), kOp, "mask is on ", device_name(mask.device()), ", scores on ",
             device_name(scores.device()));
}

}  // namespace

Tensor softmax_pool(const Tensor& scores, const Tensor& values, const Tensor& mask) {
  check_operands(scores, values, mask);
  const Tensor s = contiguous(scores), v = contiguous(values);
  const Tensor m = mask.defined() ? contiguous(mask) : Tensor();
  Tensor out = empty({scores.size(0), scores.size(2)}, scores.dtype(), scores.device());
  // The weights are kept only for a backward.
  const bool differentiable = any_requires_grad({scores, values});
  Tensor probs = differentiable ? empty(scores.shape(), scores.dtype(), scores.device()) : Tensor();
  kForward(scores.device(), s, v, m, out, probs);
  if (!differentiable) return out;

  const Tensor vs = v.detach(), os = out.detach();
  record(out, kOp, {scores, values}, {probs, vs, m, os}, [probs, vs, m, os](const Tensor& g, const std::vector<bool>&) {
    Tensor grad_scores = empty(vs.shape(), vs.dtype(), vs.device());
    Tensor grad_values = empty(vs.shape(), vs.dtype(), vs.device());
    kBackward(vs.device(), contiguous(g), probs, vs, m, os, grad_scores, grad_values);
    return std::vector<Tensor>{grad_scores, grad_values};
  });
  return out;
}

}  // namespace attn
