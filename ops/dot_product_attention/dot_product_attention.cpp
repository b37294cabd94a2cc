#include "attn/ops/dot_product_attention/dot_product_attention.h"

#include <cmath>

#include "attn/engine/autograd.h"
#include "attn/engine/copy.h"
#include "attn/engine/kernel_table.h"
#include "attn/ops/dot_product_attention/dot_product_attention_kernels.h"
#include "attn/ops/matmul/matmul.h"
#include "attn/ops/softmax/softmax.h"
#include "attn/ops/unary/unary.h"
#include "attn/ops/view/view.h"

namespace attn {

namespace {

constexpr const char* kOp = "dot_product_attention";

using ForwardFn = void (*)(const Tensor&, const Tensor&, const Tensor&, const Tensor&, double, const Tensor&,
                           const Tensor&);
using BackwardKernelFn = void (*)(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                                  const Tensor&, double, const Tensor&, const Tensor&, const Tensor&);
const DeviceKernels<ForwardFn> kForward{kOp, dot_product_attention_forward_cpu,
                                        ATTN_CUDA_KERNEL(dot_product_attention_forward_cuda)};
const DeviceKernels<BackwardKernelFn> kBackward{"dot_product_attention_backward", dot_product_attention_backward_cpu,
                                                ATTN_CUDA_KERNEL(dot_product_attention_backward_cuda)};

void check_operand(const char* which, const Tensor& t, const Tensor& q) {
  ATTN_CHECK(t.defined() && t.dim() == 4, kOp, which, " must be [B, h, n, d], got ",
             t.defined() ? shape_str(t.shape()) : std::string("undefined"));
  ATTN_CHECK(t.dtype() == q.dtype(), kOp, which, " is ", dtype_name(t.dtype()), " but q is ", dtype_name(q.dtype()));
  ATTN_CHECK(t.device() == q.device(), kOp, which, " on ", device_name(t.device()), ", q on ", device_name(q.device()));
}

void check_operands(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& key_valid, double scale) {
  check_operand("q", q, q);
  ATTN_CHECK(is_floating(q.dtype()), kOp, "expects float32 or float64, got ", dtype_name(q.dtype()));
  check_operand("k", k, q);
  check_operand("v", v, q);
  ATTN_CHECK(k.shape() == v.shape(), kOp, "v of shape ", shape_str(v.shape()), " must have k's shape ",
             shape_str(k.shape()));
  ATTN_CHECK(k.size(0) == q.size(0) && k.size(1) == q.size(1) && k.size(3) == q.size(3), kOp, "k of shape ",
             shape_str(k.shape()), " does not fit q of shape ", shape_str(q.shape()),
             " (same batch, heads and features expected)");
  const Shape keys{q.size(0), k.size(2)};
  ATTN_CHECK(key_valid.defined() && key_valid.dtype() == DType::U8 && key_valid.shape() == keys, kOp,
             "key_valid must be uint8 [B, nk] = ", shape_str(keys), ", got ",
             key_valid.defined() ? std::string(dtype_name(key_valid.dtype())) + " " + shape_str(key_valid.shape())
                                 : std::string("undefined"));
  ATTN_CHECK(key_valid.device() == q.device(), kOp, "key_valid on ", device_name(key_valid.device()), ", q on ",
             device_name(q.device()));
  ATTN_CHECK(std::isfinite(scale), kOp, "scale must be finite, got ", scale);
}

}  // namespace

DotProductAttention dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& key_valid,
                                          double scale) {
  check_operands(q, k, v, key_valid, scale);
  const int64_t B = q.size(0), h = q.size(1), nq = q.size(2), nk = k.size(2), d = q.size(3);
  const Tensor qr = with_contiguous_rows(q), kr = with_contiguous_rows(k), vr = with_contiguous_rows(v),
               valid = contiguous(key_valid);
  Tensor out = empty_heads_token_major(B, h, nq, d, q.dtype(), q.device());
  Tensor probs = empty({B, h, nq, nk}, q.dtype(), q.device());
  kForward(q.device(), qr, kr, vr, valid, scale, out, probs);
  if (any_requires_grad({q, k, v})) {
    record(out, kOp, {q, k, v}, [qr, kr, vr, valid, probs, scale](const Tensor& g, const std::vector<bool>&) {
      const int64_t B = qr.size(0), h = qr.size(1), d = qr.size(3);
      Tensor gq = empty_heads_token_major(B, h, qr.size(2), d, qr.dtype(), qr.device());
      Tensor gk = empty_heads_token_major(B, h, kr.size(2), d, kr.dtype(), kr.device());
      Tensor gv = empty_heads_token_major(B, h, kr.size(2), d, kr.dtype(), kr.device());
      kBackward(g.device(), with_contiguous_rows(g), qr, kr, vr, valid, probs, scale, gq, gk, gv);
      return std::vector<Tensor>{gq, gk, gv};
    });
  }
  return {out, probs};
}

DotProductAttention dot_product_attention_composed(const Tensor& q, const Tensor& k, const Tensor& v,
                                                   const Tensor& key_valid, double scale) {
  check_operands(q, k, v, key_valid, scale);
  const Tensor scores = mul_scalar(matmul(q, transpose(k, -1, -2)), scale);
  const Tensor p = softmax(scores, -1, unsqueeze(unsqueeze(key_valid, 1), 1));
  return {matmul(p, v), p.detach()};
}

}  // namespace attn
