#include "attn/ops/window_attention.h"

#include <algorithm>
#include <cmath>

#include "attn/engine/autograd.h"
#include "attn/engine/copy.h"
#include "attn/engine/kernel_table.h"
#include "attn/ops/window_attention_kernels.h"

namespace attn {

namespace {

constexpr const char* kOp = "window_attention";

using ForwardFn = void (*)(const Tensor&, const Tensor&, const Tensor&, const Tensor&, double, const Tensor&,
                           const Tensor&);
using BackwardKernelFn = void (*)(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                                  const Tensor&, double, const Tensor&, const Tensor&, const Tensor&);
const DeviceKernels<ForwardFn> kForward{kOp, window_attention_forward_cpu,
                                        ATTN_CUDA_KERNEL(window_attention_forward_cuda)};
const DeviceKernels<BackwardKernelFn> kBackward{"window_attention_backward", window_attention_backward_cpu,
                                                ATTN_CUDA_KERNEL(window_attention_backward_cuda)};

void check_like_q(const char* which, const Tensor& t, const Tensor& q) {
  ATTN_CHECK(t.defined(), kOp, which, " is undefined");
  ATTN_CHECK(t.shape() == q.shape(), kOp, which, " must have q's shape ", shape_str(q.shape()), ", got ",
             shape_str(t.shape()));
  ATTN_CHECK(t.dtype() == q.dtype(), kOp, which, " is ", dtype_name(t.dtype()), " but q is ", dtype_name(q.dtype()));
  ATTN_CHECK(t.device() == q.device(), kOp, which, " on ", device_name(t.device()), ", q on ",
             device_name(q.device()));
}

// The kernels read contiguous, history-free operands.
Tensor plain(const Tensor& t) { return contiguous(t.detach()); }

}  // namespace

WindowAttention fused_window_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& allowed,
                                       double scale) {
  ATTN_CHECK(q.defined() && q.dim() == 4, kOp, "q must be [B, h, n, d], got ",
             q.defined() ? shape_str(q.shape()) : std::string("undefined"));
  ATTN_CHECK(is_floating(q.dtype()), kOp, "expects float32 or float64, got ", dtype_name(q.dtype()));
  check_like_q("k", k, q);
  check_like_q("v", v, q);
  const int64_t B = q.size(0), n = q.size(2);
  ATTN_CHECK(allowed.defined() && allowed.dtype() == DType::U8 && allowed.dim() == 3, kOp,
             "allowed must be a uint8 [B, n, W] band mask (nonzero = may attend), got ",
             allowed.defined() ? std::string(dtype_name(allowed.dtype())) + " " + shape_str(allowed.shape())
                               : std::string("undefined"));
  const int64_t W = allowed.size(2);
  ATTN_CHECK(allowed.size(0) == B && allowed.size(1) == n && W % 2 == 1, kOp,
             "allowed must be [B, n, W] = [", B, ", ", n, ", odd W] (key j - (W-1)/2 + t of query j), got ",
             shape_str(allowed.shape()));
  ATTN_CHECK(allowed.device() == q.device(), kOp, "allowed on ", device_name(allowed.device()), ", q on ",
             device_name(q.device()));
  ATTN_CHECK(std::isfinite(scale), kOp, "scale must be finite, got ", scale);

  Tensor qp = plain(q), kp = plain(k), vp = plain(v), mp = plain(allowed);
  Tensor out = empty(q.shape(), q.dtype(), q.device());
  // The probabilities are saved for the backward: they are what the trace
  // records anyway, take W values per query against the d of a recomputation's
  // score pass (W q.k dot products and exponentials), and make dS a product.
  Tensor probs = empty({B, q.size(1), n, W}, q.dtype(), q.device());
  kForward(q.device(), qp, kp, vp, mp, scale, out, probs);
  if (any_requires_grad({q, k, v})) {
    record(out, kOp, {q, k, v}, [qp, kp, vp, mp, probs, scale](const Tensor& g, const std::vector<bool>&) {
      Tensor gq = empty(qp.shape(), qp.dtype(), qp.device());
      Tensor gk = empty(kp.shape(), kp.dtype(), kp.device());
      Tensor gv = empty(vp.shape(), vp.dtype(), vp.device());
      kBackward(g.device(), contiguous(g), qp, kp, vp, mp, probs, scale, gq, gk, gv);
      return std::vector<Tensor>{gq, gk, gv};
    });
  }
  return {out, probs};
}

Tensor window_band_mask(const Tensor& valid, const std::vector<int64_t>& radii) {
  const char* op = "window_band_mask";
  ATTN_CHECK(valid.defined() && valid.dtype() == DType::U8 && valid.dim() == 2, op, "valid must be uint8 [B, n], got ",
             valid.defined() ? std::string(dtype_name(valid.dtype())) + " " + shape_str(valid.shape())
                             : std::string("undefined"));
  const int64_t b = valid.size(0), n = valid.size(1);
  ATTN_CHECK(static_cast<int64_t>(radii.size()) == b, op, "needs one radius per example (", b, "), got ",
             radii.size());
  int64_t reach = 0;  // R: the widest radius any example needs, capped at n - 1
  for (int64_t r : radii) {
    ATTN_CHECK(r >= 0, op, "window radius must be >= 0, got ", r);
    reach = std::max(reach, std::min(r, std::max<int64_t>(n - 1, 0)));
  }
  const int64_t width = 2 * reach + 1;
  const Tensor ok = to_device(contiguous(valid), Device::CPU);
  const uint8_t* okp = ok.data<uint8_t>();
  Tensor allowed = zeros({b, n, width}, DType::U8);
  uint8_t* a = allowed.data<uint8_t>();
  for (int64_t e = 0; e < b; ++e) {
    const int64_t r = std::min(radii[static_cast<size_t>(e)], reach);
    for (int64_t j = 0; j < n; ++j)
      for (int64_t t = reach - r; t <= reach + r; ++t) {
        const int64_t i = j - reach + t;
        a[(e * n + j) * width + t] = i >= 0 && i < n && okp[e * n + i] != 0;
      }
  }
  return valid.device() == Device::CPU ? allowed : to_device(allowed, valid.device());
}

}  // namespace attn
