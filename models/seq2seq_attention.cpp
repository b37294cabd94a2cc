#include "attn/models/seq2seq_attention.h"

#include <cmath>

#include "attn/engine/error.h"
#include "attn/models/masks.h"
#include "attn/models/multi_head.h"
#include "attn/ops/dot_product_attention/dot_product_attention.h"
#include "attn/ops/join/join.h"
#include "attn/ops/matmul/matmul.h"
#include "attn/ops/softmax/softmax.h"
#include "attn/ops/unary/unary.h"
#include "attn/ops/view/view.h"

namespace attn {

SequenceAttention::SequenceAttention(int64_t features, int64_t heads, double attention_keep, Generator& init,
                                     Generator& noise, DType dtype)
    : features_(features),
      heads_(heads),
      wq_(features, features, init, false, dtype),
      wk_(features, features, init, false, dtype),
      wv_(features, features, init, false, dtype),
      wo_(features, features, init, false, dtype),
      drop_(attention_keep, noise) {
  ATTN_CHECK(heads > 0 && features % heads == 0, "SequenceAttention", "features ", features,
             " must be a positive multiple of heads ", heads);
  register_module("q", wq_);
  register_module("k", wk_);
  register_module("v", wv_);
  register_module("out", wo_);
  register_module("dropout", drop_);
}

KeyValues SequenceAttention::keys_values(const Tensor& memory) const {
  ATTN_CHECK(memory.dim() == 3 && memory.size(2) == features_, "SequenceAttention", "expects memory [B, n, ",
             features_, "], got ", shape_str(memory.shape()));
  return {split_heads(wk_(memory), heads_), split_heads(wv_(memory), heads_)};
}

Tensor SequenceAttention::attend(const Tensor& x, const KeyValues& kv, const Tensor& memory_valid,
                                 bool causal) const {
  const char* op = "SequenceAttention";
  ATTN_CHECK(x.dim() == 3 && x.size(2) == features_, op, "expects x [B, n, ", features_, "], got ",
             shape_str(x.shape()));
  ATTN_CHECK(kv.k.dim() == 4 && kv.k.size(0) == x.size(0), op, "keys of shape ", shape_str(kv.k.shape()),
             " do not fit x of shape ", shape_str(x.shape()));
  check_token_mask(memory_valid, x.size(0), kv.k.size(2), op, "memory_valid");
  const Tensor q = split_heads(wq_(x), heads_);
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(3)));
  Tensor heads;
  if (training() && drop_.keep_prob() < 1) {
    Tensor allowed = unsqueeze(unsqueeze(memory_valid, 1), 1);  // [B, 1, 1, nk]
    if (causal) {
      ATTN_CHECK(q.size(2) == kv.k.size(2), op,
                 "causal attention with attention dropout expects as many queries as keys, got ", q.size(2), " and ",
                 kv.k.size(2));
      allowed = mask_and(allowed, mask_not(direction_mask(q.size(2), Direction::Backward).to(x.device())));
    }
    const Tensor scores = mul_scalar(matmul(q, transpose(kv.k, -1, -2)), scale);
    heads = merge_heads(matmul(drop_(softmax(scores, -1, allowed)), kv.v));
  } else {
    const Tensor out = causal ? causal_dot_product_attention(q, kv.k, kv.v, memory_valid, scale).out
                              : dot_product_attention(q, kv.k, kv.v, memory_valid, scale).out;
    heads = merge_heads(out);
  }
  return wo_(heads);
}

Tensor SequenceAttention::step(const Tensor& x, KeyValues& cache) const {
  ATTN_CHECK(x.dim() == 3 && x.size(1) == 1, "SequenceAttention", "a decoding step takes x [B, 1, D], got ",
             shape_str(x.shape()));
  const KeyValues now = keys_values(x);
  cache.k = cache.k.defined() ? concat({cache.k, now.k}, 2) : now.k;
  cache.v = cache.v.defined() ? concat({cache.v, now.v}, 2) : now.v;
  const Tensor valid = ones({x.size(0), cache.k.size(2)}, DType::U8, x.device());
  // The newest position attends every cached key, itself included.
  return attend(x, cache, valid, false);
}

}  // namespace attn
