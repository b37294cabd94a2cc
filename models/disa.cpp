#include "attn/models/disa.h"

#include <algorithm>
#include <vector>

#include "attn/engine/copy.h"
#include "attn/engine/error.h"
#include "attn/models/attention_trace.h"
#include "attn/ops/binary/binary.h"
#include "attn/ops/index/index.h"
#include "attn/ops/matmul/matmul.h"
#include "attn/ops/multi_dim_attention/multi_dim_attention.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/ops/softmax/softmax.h"
#include "attn/ops/unary/unary.h"
#include "attn/ops/view/view.h"

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

namespace {

// linear(x, weight, bias) for the rows of x [B, n, d] listed in `rows`
// (flat indices into B * n); the other rows of the result are 0.
Tensor linear_on_rows(const Tensor& x, const Tensor& weight, const Tensor& bias, const std::vector<double>& rows) {
  const int64_t b = x.size(0), n = x.size(1), d = x.size(2), h = weight.size(0);
  const Tensor index = from_vector(rows, {static_cast<int64_t>(rows.size())}, DType::I64).to(x.device());
  Tensor products = linear(index_select(reshape(x, {b * n, d}), 0, index), weight, bias);
  return reshape(index_add(zeros({b * n, h}, x.dtype(), x.device()), 0, index, products), {b, n, h});
}

}  // namespace

ScoreTerms score_terms(const Tensor& h, const Tensor& w1, const Tensor& bias, const Tensor& w2,
                       const Tensor& pair_mask) {
  ATTN_CHECK(
      h.dim() == 3 && pair_mask.dtype() == DType::U8 && pair_mask.shape() == Shape({h.size(0), h.size(1), h.size(1)}),
      "score_terms", "expects h [B, n, d] and a uint8 pair mask [B, n, n], got ", shape_str(h.shape()), " and ",
      dtype_name(pair_mask.dtype()), " ", shape_str(pair_mask.shape()));
  const int64_t b = h.size(0), n = h.size(1);
  const Tensor allowed = contiguous(pair_mask.to(Device::CPU));
  const uint8_t* m = allowed.data<uint8_t>();
  // Branch-free ORs over each mask row (they vectorise): a query row is used
  // when its row has an allowed key, a key row when some row allows it.
  std::vector<uint8_t> is_query(static_cast<size_t>(b * n), 0), is_key(static_cast<size_t>(b * n), 0);
  for (int64_t e = 0; e < b; ++e) {
    uint8_t* keys = is_key.data() + e * n;
    for (int64_t i = 0; i < n; ++i) {
      const uint8_t* row = m + (e * n + i) * n;
      uint8_t any = 0;
      for (int64_t j = 0; j < n; ++j) {
        any |= row[j];
        keys[j] |= row[j];
      }
      is_query[e * n + i] = any;
    }
  }
  auto term = [&](const std::vector<uint8_t>& used, const Tensor& w, const Tensor& bias_or_none) {
    std::vector<double> rows;
    for (int64_t r = 0; r < b * n; ++r)
      if (used[r]) rows.push_back(static_cast<double>(r));
    const double skipped = 1.0 - static_cast<double>(rows.size()) / static_cast<double>(std::max<int64_t>(1, b * n));
    return skipped >= kSkippedRowsMinShare ? linear_on_rows(h, w, bias_or_none, rows) : linear(h, w, bias_or_none);
  };
  return {term(is_query, w1, bias), term(is_key, w2, Tensor())};
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
  Tensor h = fc_.forward(x, options_.activation);
  Tensor s = multi_dim_masked_attention(h, linear(h, w1_.weight, bias_), w2_(h), Tensor(), mask, options_.scale_c,
                                        options_.materialize_scores);
  return zero_padded(fusion_.forward(s, h), valid);
}

}  // namespace attn
