#include "attn/ops/separable_attention/separable_attention.h"

#include "attn/engine/autograd.h"
#include "attn/engine/kernel_table.h"
#include "attn/engine/copy.h"
#include "attn/ops/separable_attention/separable_attention_kernels.h"
#include "attn/ops/view/view.h"

namespace attn {

namespace {

constexpr const char* kOp = "separable_attention";

using ForwardFn = void (*)(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                           const Tensor&, const Tensor&);
using BackwardKernelFn = void (*)(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                                  const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                                  const Tensor&, const Tensor&);
const DeviceKernels<ForwardFn> kForward{kOp, separable_attention_forward_cpu,
                                        ATTN_CUDA_KERNEL(separable_attention_forward_cuda)};
const DeviceKernels<BackwardKernelFn> kBackward{"separable_attention_backward", separable_attention_backward_cpu,
                                                ATTN_CUDA_KERNEL(separable_attention_backward_cuda)};

void check_float_operand(const char* which, const Tensor& t, const Tensor& a, const Shape& shape) {
  ATTN_CHECK(t.defined(), kOp, which, " is undefined");
  ATTN_CHECK(t.shape() == shape, kOp, which, " must be ", shape_str(shape), ", got ", shape_str(t.shape()));
  ATTN_CHECK(t.dtype() == a.dtype(), kOp, which, " is ", dtype_name(t.dtype()), " but a is ", dtype_name(a.dtype()));
  ATTN_CHECK(t.device() == a.device(), kOp, which, " on ", device_name(t.device()), ", a on ", device_name(a.device()));
}

// The kernels read contiguous, history-free operands.
Tensor plain(const Tensor& t) { return t.defined() ? contiguous(t.detach()) : Tensor(); }

}  // namespace

Tensor separable_attention(const Tensor& a, const Tensor& s, const Tensor& v, const Tensor& allowed,
                           const Tensor& keep_pairs, const Tensor& keep_features) {
  ATTN_CHECK(a.defined() && a.dim() == 3, kOp, "a must be [G, nq, nk], got ",
             a.defined() ? shape_str(a.shape()) : std::string("undefined"));
  ATTN_CHECK(is_floating(a.dtype()), kOp, "expects float32 or float64, got ", dtype_name(a.dtype()));
  ATTN_CHECK(s.defined() && s.dim() == 3, kOp, "s must be [G, nk, d], got ",
             s.defined() ? shape_str(s.shape()) : std::string("undefined"));
  const int64_t G = a.size(0), nq = a.size(1), nk = a.size(2), d = s.size(2);
  const Shape pairs{G, nq, nk}, keys{G, nk, d};
  check_float_operand("s", s, a, keys);
  check_float_operand("v", v, a, keys);
  if (keep_pairs.defined()) check_float_operand("keep_pairs", keep_pairs, a, pairs);
  if (keep_features.defined()) check_float_operand("keep_features", keep_features, a, keys);
  ATTN_CHECK(allowed.defined() && allowed.dtype() == DType::U8, kOp,
             "allowed must be a uint8 tensor (nonzero = may attend)",
             allowed.defined() ? std::string(", got ") + dtype_name(allowed.dtype()) : std::string());
  ATTN_CHECK(allowed.device() == a.device(), kOp, "allowed on ", device_name(allowed.device()), ", a on ",
             device_name(a.device()));
  ATTN_CHECK(broadcasts_to(allowed.shape(), pairs), kOp, "allowed of shape ", shape_str(allowed.shape()),
             " does not broadcast to [G, nq, nk] = ", shape_str(pairs));

  Tensor ap = plain(a), sp = plain(s), vp = plain(v), kp = plain(keep_pairs), kf = plain(keep_features);
  Tensor m;
  {
    NoGrad no_grad;
    m = contiguous(expand(allowed, pairs));
  }
  Tensor out = empty({G, nq, d}, a.dtype(), a.device());
  Tensor log_norm = empty({G, nq, d}, a.dtype(), a.device());
  kForward(a.device(), ap, sp, vp, m, kp, kf, out, log_norm);
  if (!any_requires_grad({a, s, v})) return out;

  Tensor saved_out = out.detach();
  record(out, kOp, {a, s, v}, {ap, sp, vp, m, kp, kf, saved_out, log_norm}, [ap, sp, vp, m, kp, kf, saved_out, log_norm](const Tensor& g, const std::vector<bool>&) {
    Tensor ga = empty(ap.shape(), ap.dtype(), ap.device());
    Tensor gs = empty(sp.shape(), sp.dtype(), sp.device());
    Tensor gv = empty(vp.shape(), vp.dtype(), vp.device());
    kBackward(g.device(), contiguous(g), ap, sp, vp, m, kp, kf, saved_out, log_norm, ga, gs, gv);
    return std::vector<Tensor>{ga, gs, gv};
  });
  return out;
}

}  // namespace attn
