#include "attn/ops/dot_product_attention/dot_product_attention.h"

#include <string>

#include "attn/ops/dot_product_attention/dot_product_attention_kernels.h"
#include "attn/ops/matmul/matmul.h"
#include "attn/ops/softmax/softmax.h"
#include "attn/ops/unary/unary.h"
#include "attn/ops/view/view.h"

namespace attn {

namespace {

constexpr const char* kOp = "dot_product_attention";

const AttentionKernels kKernels{
    {kOp, dot_product_attention_forward_cpu, ATTN_CUDA_KERNEL(dot_product_attention_forward_cuda)},
    {"dot_product_attention_backward", dot_product_attention_backward_cpu,
     ATTN_CUDA_KERNEL(dot_product_attention_backward_cuda)}};

// k and v share their shape [B, h, nk, d]: q's batch, heads and features.
void check_operands(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& key_valid, double scale) {
  check_attention_operands(kOp, q, k, v);
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
  check_attention_mask_and_scale(kOp, "key_valid", key_valid, q, scale);
}

}  // namespace

DotProductAttention dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& key_valid,
                                          double scale) {
  check_operands(q, k, v, key_valid, scale);
  return run_fused_attention(kOp, kKernels, q, k, v, key_valid, scale, k.size(2));
}

DotProductAttention dot_product_attention_composed(const Tensor& q, const Tensor& k, const Tensor& v,
                                                   const Tensor& key_valid, double scale) {
  check_operands(q, k, v, key_valid, scale);
  const Tensor scores = mul_scalar(matmul(q, transpose(k, -1, -2)), scale);
  const Tensor p = softmax(scores, -1, unsqueeze(unsqueeze(key_valid, 1), 1));
  return {matmul(p, v), p.detach()};
}

}  // namespace attn
