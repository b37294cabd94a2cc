#include "attn/models/multi_head.h"

#include <cmath>

#include "attn/engine/error.h"
#include "attn/models/masks.h"
#include "attn/ops/dot_product_attention/dot_product_attention.h"
#include "attn/ops/matmul/matmul.h"
#include "attn/ops/softmax/softmax.h"
#include "attn/ops/unary/unary.h"
#include "attn/ops/view/view.h"

namespace attn {

Tensor split_heads(const Tensor& x, int64_t heads) {
  ATTN_CHECK(x.dim() == 3, "split_heads", "expects [B, n, D], got ", shape_str(x.shape()));
  ATTN_CHECK(heads > 0 && x.size(2) % heads == 0, "split_heads", "features ", x.size(2),
             " do not divide into ", heads, " heads");
  return transpose(reshape(x, {x.size(0), x.size(1), heads, x.size(2) / heads}), 1, 2);
}

Tensor merge_heads(const Tensor& x) {
  ATTN_CHECK(x.dim() == 4, "merge_heads", "expects [B, h, n, d_h], got ", shape_str(x.shape()));
  return reshape(transpose(x, 1, 2), {x.size(0), x.size(2), x.size(1) * x.size(3)});
}

Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask) {
  const char* op = "scaled_dot_product_attention";
  ATTN_CHECK(q.dim() == 4 && k.dim() == 4 && v.dim() == 4, op, "q, k, v must be [B, h, n, d_h], got ",
             shape_str(q.shape()), ", ", shape_str(k.shape()), ", ", shape_str(v.shape()));
  ATTN_CHECK(k.shape() == v.shape() && q.size(0) == k.size(0) && q.size(1) == k.size(1) && q.size(3) == k.size(3), op,
             "q ", shape_str(q.shape()), " does not fit k ", shape_str(k.shape()), " and v ", shape_str(v.shape()));
  Tensor scores = mul_scalar(matmul(q, transpose(k, -1, -2)), 1.0 / std::sqrt(static_cast<double>(q.size(3))));
  return matmul(softmax(scores, -1, mask), v);
}

MultiHeadAttention::MultiHeadAttention(int64_t features, int64_t heads, Generator& gen, DType dtype)
    : features_(features),
      heads_(heads),
      wq_(features, features, gen, false, dtype),
      wk_(features, features, gen, false, dtype),
      wv_(features, features, gen, false, dtype),
      wo_(features, features, gen, false, dtype) {
  ATTN_CHECK(heads > 0 && features % heads == 0, "MultiHeadAttention", "features ", features,
             " must be a positive multiple of heads ", heads);
  register_module("q", wq_);
  register_module("k", wk_);
  register_module("v", wv_);
  register_module("out", wo_);
}

Tensor MultiHeadAttention::forward(const Tensor& x, const Tensor& mask) const {
  const char* op = "MultiHeadAttention";
  ATTN_CHECK(x.dim() == 3 && x.size(2) == features_, op, "expects x [B, n, ", features_, "], got ",
             shape_str(x.shape()));
  ATTN_CHECK(mask.dtype() == DType::U8 && mask.shape() == Shape({x.size(0), x.size(1)}), op,
             "mask must be uint8 [B, n] = ", shape_str({x.size(0), x.size(1)}), ", got ", dtype_name(mask.dtype()),
             " ", shape_str(mask.shape()));
  Tensor q = split_heads(wq_(x), heads_), k = split_heads(wk_(x), heads_), v = split_heads(wv_(x), heads_);
  // The fused op reads the split_heads views in place and returns heads
  // stored in [B, n, h, d] order, so merge_heads is a view.
  Tensor heads =
      dot_product_attention(q, k, v, mask, 1.0 / std::sqrt(static_cast<double>(q.size(3)))).out;
  return zero_padded(wo_(merge_heads(heads)), mask);
}

}  // namespace attn
