#include "attn/ops/window_attention/window_attention.h"

#include <algorithm>
#include <string>

#include "attn/engine/copy.h"
#include "attn/ops/view/view.h"
#include "attn/ops/window_attention/window_attention_kernels.h"

namespace attn {

namespace {

constexpr const char* kOp = "window_attention";

const AttentionKernels kKernels{
    {kOp, window_attention_forward_cpu, ATTN_CUDA_KERNEL(window_attention_forward_cuda)},
    {"window_attention_backward", window_attention_backward_cpu, ATTN_CUDA_KERNEL(window_attention_backward_cuda)}};

void check_like_q(const char* which, const Tensor& t, const Tensor& q) {
  ATTN_CHECK(t.shape() == q.shape(), kOp, which, " must have q's shape ", shape_str(q.shape()), ", got ",
             shape_str(t.shape()));
}

}  // namespace

WindowAttention fused_window_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& allowed,
                                       double scale) {
  check_attention_operands(kOp, q, k, v);
  check_like_q("k", k, q);
  check_like_q("v", v, q);
  const int64_t B = q.size(0), h = q.size(1), n = q.size(2);
  ATTN_CHECK(allowed.defined() && allowed.dtype() == DType::U8 && (allowed.dim() == 3 || allowed.dim() == 4), kOp,
             "allowed must be a uint8 band mask [B, n, W] or, per head, [B, h, n, W] (nonzero = may attend), got ",
             allowed.defined() ? std::string(dtype_name(allowed.dtype())) + " " + shape_str(allowed.shape())
                               : std::string("undefined"));
  const bool per_head = allowed.dim() == 4;
  const int64_t W = allowed.size(allowed.dim() - 1);
  ATTN_CHECK(allowed.size(0) == B && (!per_head || allowed.size(1) == h) && allowed.size(allowed.dim() - 2) == n &&
                 W % 2 == 1,
             kOp, "allowed must be ", per_head ? "[B, h, n, W] = [" : "[B, n, W] = [", B, ", ",
             per_head ? std::to_string(h) + ", " : std::string(), n,
             ", odd W] (key j - (W-1)/2 + t of query j), got ", shape_str(allowed.shape()));
  check_attention_mask_and_scale(kOp, "allowed", allowed, q, scale);
  return run_fused_attention(kOp, kKernels, q, k, v, allowed, scale, W);
}

namespace {

constexpr const char* kMaskOp = "window_band_mask";

void check_valid(const Tensor& valid) {
  ATTN_CHECK(valid.defined() && valid.dtype() == DType::U8 && valid.dim() == 2, kMaskOp,
             "valid must be uint8 [B, n], got ",
             valid.defined() ? std::string(dtype_name(valid.dtype())) + " " + shape_str(valid.shape())
                             : std::string("undefined"));
}

// R: the widest radius any head of any example needs, capped at n - 1.
int64_t reach_of(const std::vector<std::vector<int64_t>>& radii, int64_t b, int64_t n) {
  int64_t reach = 0;
  for (const std::vector<int64_t>& head : radii) {
    ATTN_CHECK(static_cast<int64_t>(head.size()) == b, kMaskOp, "needs one radius per example (", b, "), got ",
               head.size());
    for (int64_t r : head) {
      ATTN_CHECK(r >= 0, kMaskOp, "window radius must be >= 0, got ", r);
      reach = std::max(reach, std::min(r, std::max<int64_t>(n - 1, 0)));
    }
  }
  return reach;
}

// One head's [B, n, 2R+1] band at `a`: key j - R + t of query j is allowed
// when |t - R| <= radius of its example, it lies in [0, n) and it is valid.
void fill_band(const uint8_t* ok, int64_t b, int64_t n, int64_t reach, const std::vector<int64_t>& radii, uint8_t* a) {
  const int64_t width = 2 * reach + 1;
  for (int64_t e = 0; e < b; ++e) {
    const int64_t r = std::min(radii[static_cast<size_t>(e)], reach);
    for (int64_t j = 0; j < n; ++j)
      for (int64_t t = reach - r; t <= reach + r; ++t) {
        const int64_t i = j - reach + t;
        a[(e * n + j) * width + t] = i >= 0 && i < n && ok[e * n + i] != 0;
      }
  }
}

}  // namespace

Tensor window_band_mask(const Tensor& valid, const std::vector<int64_t>& radii) {
  check_valid(valid);
  const int64_t b = valid.size(0), n = valid.size(1);
  const int64_t reach = reach_of({radii}, b, n);
  const Tensor ok = to_device(contiguous(valid), Device::CPU);
  Tensor allowed = zeros({b, n, 2 * reach + 1}, DType::U8);
  fill_band(ok.data<uint8_t>(), b, n, reach, radii, allowed.data<uint8_t>());
  return valid.device() == Device::CPU ? allowed : to_device(allowed, valid.device());
}

Tensor window_band_mask_per_head(const Tensor& valid, const std::vector<std::vector<int64_t>>& radii) {
  check_valid(valid);
  const int64_t b = valid.size(0), n = valid.size(1), h = static_cast<int64_t>(radii.size());
  ATTN_CHECK(h > 0, kMaskOp, "needs the radii of at least one head");
  const int64_t reach = reach_of(radii, b, n), width = 2 * reach + 1;
  const Tensor ok = to_device(contiguous(valid), Device::CPU);
  // Built as [h, B, n, W] (one head's band is contiguous), returned as [B, h, n, W].
  Tensor by_head = zeros({h, b, n, width}, DType::U8);
  for (int64_t c = 0; c < h; ++c)
    fill_band(ok.data<uint8_t>(), b, n, reach, radii[static_cast<size_t>(c)],
              by_head.data<uint8_t>() + c * b * n * width);
  Tensor allowed = contiguous(permute(by_head, {1, 0, 2, 3}));
  return valid.device() == Device::CPU ? allowed : to_device(allowed, valid.device());
}

}  // namespace attn
