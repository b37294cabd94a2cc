#include "attn/ops/dot_product_attention/dot_product_attention_fused.h"

#include <cmath>
#include <string>
#include <vector>

#include "attn/engine/autograd.h"
#include "attn/engine/copy.h"
#include "attn/ops/head_rows.h"

namespace attn {

namespace {

void check_operand(const char* op, const char* which, const Tensor& t, const Tensor& q) {
  ATTN_CHECK(t.defined() && t.dim() == 4, op, which, " must be [B, h, n, d], got ",
             t.defined() ? shape_str(t.shape()) : std::string("undefined"));
  ATTN_CHECK(t.dtype() == q.dtype(), op, which, " is ", dtype_name(t.dtype()), " but q is ", dtype_name(q.dtype()));
  ATTN_CHECK(t.device() == q.device(), op, which, " on ", device_name(t.device()), ", q on ", device_name(q.device()));
}

}  // namespace

void check_attention_operands(const char* op, const Tensor& q, const Tensor& k, const Tensor& v) {
  check_operand(op, "q", q, q);
  ATTN_CHECK(is_floating(q.dtype()), op, "expects float32 or float64, got ", dtype_name(q.dtype()));
  check_operand(op, "k", k, q);
  check_operand(op, "v", v, q);
}

void check_attention_mask_and_scale(const char* op, const char* which, const Tensor& mask, const Tensor& q,
                                    double scale) {
  ATTN_CHECK(mask.device() == q.device(), op, which, " on ", device_name(mask.device()), ", q on ",
             device_name(q.device()));
  ATTN_CHECK(std::isfinite(scale), op, "scale must be finite, got ", scale);
}

FusedAttention run_fused_attention(const char* op, const AttentionKernels& kernels, const Tensor& q, const Tensor& k,
                                   const Tensor& v, const Tensor& mask, double scale, int64_t slots) {
  const int64_t B = q.size(0), h = q.size(1), nq = q.size(2), d = q.size(3);
  const Tensor qr = with_contiguous_rows(q), kr = with_contiguous_rows(k), vr = with_contiguous_rows(v),
               m = contiguous(mask);
  Tensor out = empty_heads_token_major(B, h, nq, d, q.dtype(), q.device());
  Tensor probs = empty({B, h, nq, slots}, q.dtype(), q.device());
  kernels.forward(q.device(), qr, kr, vr, m, scale, out, probs);
  if (any_requires_grad({q, k, v})) {
    record(out, op, {q, k, v}, {qr, kr, vr, m, probs}, [&kernels, qr, kr, vr, m, probs, scale](const Tensor& g, const std::vector<bool>&) {
      const int64_t B = qr.size(0), h = qr.size(1), d = qr.size(3);
      Tensor gq = empty_heads_token_major(B, h, qr.size(2), d, qr.dtype(), qr.device());
      Tensor gk = empty_heads_token_major(B, h, kr.size(2), d, kr.dtype(), kr.device());
      Tensor gv = empty_heads_token_major(B, h, kr.size(2), d, kr.dtype(), kr.device());
      kernels.backward(g.device(), with_contiguous_rows(g), qr, kr, vr, m, probs, scale, gq, gk, gv);
      return std::vector<Tensor>{gq, gk, gv};
    });
  }
  return {out, probs};
}

}  // namespace attn
