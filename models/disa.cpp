#include "attn/models/disa.h"

#include "attn/engine/error.h"
#include "attn/models/attention_trace.h"
#include "attn/ops/binary.h"
#include "attn/ops/matmul.h"
#include "attn/ops/multi_dim_attention.h"
#include "attn/ops/reduce.h"
#include "attn/ops/softmax.h"
#include "attn/ops/unary.h"
#include "attn/ops/view.h"

namespace attn {

Tensor multi_dim_probabilities(const Tensor& query_term, const Tensor& key_term, const Tensor& bias,
                               const Tensor& pair_mask, double scale_c) {
  // scores[b, i, j, :] = c * tanh((W1 h_i + W2 h_j + b) / c)
  Tensor pre = unsqueeze(query_term, 2) + unsqueeze(key_term, 1);
  if (bias.defined()) pre = pre + bias;
  Tensor scores = mul_scalar(tanh(mul_scalar(pre, 1.0 / scale_c)), scale_c);
  return softmax(scores, 2, unsqueeze(pair_mask, -1));  // over keys j, per feature
}

Tensor multi_dim_masked_attention(const Tensor& h, const Tensor& query_term, const Tensor& key_term, const Tensor& bias,
                                  const Tensor& pair_mask, double scale_c, bool materialize_scores,
                                  const char* trace_name) {
  trace_attention(trace_name, [&] { return multi_dim_probabilities(query_term, key_term, bias, pair_mask, scale_c); });
  if (!materialize_scores)
    return multi_dim_attention(bias.defined() ? query_term + bias : query_term, key_term, h, pair_mask, scale_c);
  Tensor p = multi_dim_probabilities(query_term, key_term, bias, pair_mask, scale_c);
  return sum(p * unsqueeze(h, 1), {2});
}

Disa::Disa(int64_t input_dim, int64_t features, const DisaOptions& options, Generator& gen, DType dtype)
    : options_(options),
      features_(features),
      fc_(input_dim, features, gen, true, dtype),
      w1_(features, features, gen, false, dtype),
      w2_(features, features, gen, false, dtype),
      fusion_(features, gen, dtype) {
  ATTN_CHECK(options.scale_c > 0, "Disa", "scale c must be positive, got ", options.scale_c);
  register_module("fc", fc_);
  register_module("w1", w1_);
  register_module("w2", w2_);
  bias_ = register_parameter("bias", zeros({features}, dtype));
  register_module("fusion", fusion_);
}

Tensor Disa::forward(const Tensor& x, const Tensor& valid, const Tensor& extra_mask) const {
  ATTN_CHECK(x.dim() == 3, "Disa", "expects x of shape [B, n, d], got ", shape_str(x.shape()));
  AttentionTraceScope trace_scope(direction_name(options_.direction));
  const int64_t n = x.size(1);
  Tensor mask = pair_mask(valid, direction_mask(n, options_.direction));
  if (extra_mask.defined()) {
    ATTN_CHECK(extra_mask.shape() == mask.shape(), "Disa", "extra mask ", shape_str(extra_mask.shape()),
               " does not match ", shape_str(mask.shape()));
    mask = where(mask, extra_mask, zeros({}, DType::U8, mask.device()));
  }
  Tensor h = activate(options_.activation, fc_(x));
  Tensor s = multi_dim_masked_attention(h, linear(h, w1_.weight, bias_), w2_(h), Tensor(), mask, options_.scale_c,
                                        options_.materialize_scores);
  return zero_padded(fusion_.forward(s, h), valid);
}

}  // namespace attn
