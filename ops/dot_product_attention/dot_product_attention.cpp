#include "attn/ops/dot_product_attention/dot_product_attention.h"

#include <string>

#include "attn/engine/copy.h"
#include "attn/ops/dot_product_attention/dot_product_attention_kernels.h"
#include "attn/ops/matmul/matmul.h"
#include "attn/ops/softmax/softmax.h"
#include "attn/ops/unary/unary.h"
#include "attn/ops/view/view.h"

namespace attn {

namespace {

constexpr const char* kOp = "dot_product_attention";
constexpr const char* kCausalOp = "causal_dot_product_attention";

const AttentionKernels kKernels{
    {kOp, dot_product_attention_forward_cpu, ATTN_CUDA_KERNEL(dot_product_attention_forward_cuda)},
    {"dot_product_attention_backward", dot_product_attention_backward_cpu,
     ATTN_CUDA_KERNEL(dot_product_attention_backward_cuda)}};
const AttentionKernels kCausalKernels{
    {kCausalOp, causal_dot_product_attention_forward_cpu,
     ATTN_CUDA_KERNEL(causal_dot_product_attention_forward_cuda)},
    {"causal_dot_product_attention_backward", causal_dot_product_attention_backward_cpu,
     ATTN_CUDA_KERNEL(causal_dot_product_attention_backward_cuda)}};

// k and v share their shape [B, h, nk, d]: q's batch, heads and features.
void check_operands(const char* kOp, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& key_valid,
                    double scale) {
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

void check_causal_operands(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& key_valid,
                           double scale) {
  check_operands(kCausalOp, q, k, v, key_valid, scale);
  ATTN_CHECK(q.size(2) <= k.size(2), kCausalOp, "q has ", q.size(2), " queries but k only ", k.size(2),
             " keys: the queries must be the last positions of the keys' sequence");
}

// [B, 1, nq, nk]: key_valid[b, i] and i <= j + nk - nq.
Tensor causal_key_mask(const Tensor& key_valid, int64_t nq) {
  const Tensor valid = contiguous(key_valid.to(Device::CPU));
  const int64_t B = valid.size(0), nk = valid.size(1);
  Tensor mask = zeros({B, 1, nq, nk}, DType::U8);
  const uint8_t* ok = valid.data<uint8_t>();
  uint8_t* m = mask.data<uint8_t>();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t j = 0; j < nq; ++j)
      for (int64_t i = 0; i <= j + nk - nq; ++i) m[(b * nq + j) * nk + i] = ok[b * nk + i];
  return mask.to(key_valid.device());
}

}  // namespace

DotProductAttention dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& key_valid,
                                          double scale) {
  check_operands(kOp, q, k, v, key_valid, scale);
  return run_fused_attention(kOp, kKernels, q, k, v, key_valid, scale, k.size(2));
}

DotProductAttention dot_product_attention_composed(const Tensor& q, const Tensor& k, const Tensor& v,
                                                   const Tensor& key_valid, double scale) {
  check_operands(kOp, q, k, v, key_valid, scale);
  const Tensor scores = mul_scalar(matmul(q, transpose(k, -1, -2)), scale);
  const Tensor p = softmax(scores, -1, unsqueeze(unsqueeze(key_valid, 1), 1));
  return {matmul(p, v), p.detach()};
}

DotProductAttention causal_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                                 const Tensor& key_valid, double scale) {
  check_causal_operands(q, k, v, key_valid, scale);
  return run_fused_attention(kCausalOp, kCausalKernels, q, k, v, key_valid, scale, k.size(2));
}

DotProductAttention causal_dot_product_attention_composed(const Tensor& q, const Tensor& k, const Tensor& v,
                                                          const Tensor& key_valid, double scale) {
  check_causal_operands(q, k, v, key_valid, scale);
  const Tensor scores = mul_scalar(matmul(q, transpose(k, -1, -2)), scale);
  const Tensor p = softmax(scores, -1, causal_key_mask(key_valid, q.size(2)));
  return {matmul(p, v), p.detach()};
}

}  // namespace attn
