#include "attn/models/rss.h"

#include "attn/engine/autograd.h"
#include "attn/engine/error.h"
#include "attn/models/masks.h"
#include "attn/ops/binary/binary.h"
#include "attn/engine/copy.h"
#include "attn/ops/dropout/dropout.h"
#include "attn/ops/matmul/matmul.h"
#include "attn/ops/modulated_linear/modulated_linear.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/ops/unary/unary.h"
#include "attn/ops/view/view.h"
#include "attn/util/named_values.h"

namespace attn {

namespace {

void check_valid(const Tensor& valid, int64_t b, int64_t n, const char* op, const char* what = "mask") {
  check_token_mask(valid, b, n, op, what);
}

const NamedValue<RssEval> kRssEvalNames[] = {{RssEval::Threshold, "threshold"}, {RssEval::Sample, "sample"}};

}  // namespace

RssEval rss_eval_from_name(const std::string& name) { return value_from_name(kRssEvalNames, name, "rss", "rss_eval"); }

const char* rss_eval_name(RssEval e) { return name_of_value(kRssEvalNames, e); }

Tensor masked_mean_over_tokens(const Tensor& x, const Tensor& valid) {
  ATTN_CHECK(x.dim() == 3, "masked_mean", "expects x of shape [B, n, d], got ", shape_str(x.shape()));
  check_valid(valid, x.size(0), x.size(1), "masked_mean");
  Tensor total = sum(zero_padded(x, valid), {1}, true);                          // [B, 1, d]
  Tensor count = unsqueeze(sum(cast(valid, x.dtype()), {1}, true), -1);          // [B, 1, 1]
  return total / maximum(count, ones({}, x.dtype(), x.device()));
}

Rss::Rss(int64_t input_dim, int64_t hidden, Activation act, RssEval eval, Generator& init, Generator& noise,
         DType dtype)
    : act_(act),
      eval_(eval),
      noise_(&noise),
      fc_(3 * input_dim, hidden, init, true, dtype),
      out_(hidden, 1, init, true, dtype) {
  ATTN_CHECK(input_dim > 0 && hidden > 0, "rss", "input_dim and hidden must be positive, got ", input_dim, " and ",
             hidden);
  register_module("fc", fc_);
  register_module("out", out_);
}

Tensor pooled_features_linear(const Tensor& x, const Tensor& valid, const Tensor& weight, const Tensor& bias) {
  ATTN_CHECK(x.dim() == 3 && weight.dim() == 2 && weight.size(1) == 3 * x.size(2), "rss",
             "expects x [B, n, d] and a weight [h, 3d], got ", shape_str(x.shape()), " and ",
             shape_str(weight.shape()));
  check_valid(valid, x.size(0), x.size(1), "rss");
  const int64_t d = x.size(2);
  // Padded tokens are zeroed first so their (ignored) outputs stay finite.
  Tensor xz = zero_padded(x, valid);
  Tensor xbar = masked_mean_over_tokens(x, valid);  // [B, 1, d]
  // By the weight's column blocks: the xbar block runs once per sentence,
  // and the x and x * xbar blocks are one product per sentence with the
  // matrix W_x + W_xx diag(xbar) (ops/modulated_linear/modulated_linear.h):
  // a third, then two thirds fewer FLOPs than the concatenated form.
  return modulated_linear(xz, squeeze(xbar, 1), narrow(weight, 1, 0, d), narrow(weight, 1, 2 * d, d)) +
         linear(xbar, narrow(weight, 1, d, d), bias);
}

Tensor Rss::logits(const Tensor& x, const Tensor& valid) const {
  const int64_t d = fc_.weight.size(1) / 3;
  ATTN_CHECK(x.dim() == 3 && x.size(2) == d, "rss", "expects x of shape [B, n, ", d, "], got ",
             shape_str(x.shape()));
  check_valid(valid, x.size(0), x.size(1), "rss");
  Tensor pre = pooled_features_linear(x, valid, fc_.weight, fc_.bias);
  return squeeze(out_(activate(act_, pre)), -1);
}

Tensor Rss::select(const Tensor& logits, const Tensor& valid) const {
  ATTN_CHECK(logits.dim() == 2, "rss", "expects logits of shape [B, n], got ", shape_str(logits.shape()));
  check_valid(valid, logits.size(0), logits.size(1), "rss");
  if (select_all_) return valid;
  return select_tokens(logits, valid, training() || eval_ == RssEval::Sample ? noise_ : nullptr);
}

Tensor select_tokens(const Tensor& logits, const Tensor& valid, Generator* draws) {
  NoGrad no_grad;
  if (draws) {
    // Padded probabilities are set to 0, so a padded token is never drawn.
    Tensor p = masked_fill(sigmoid(logits.detach()), mask_not(valid), 0.0);
    return mask_and(cast(bernoulli(p, *draws), DType::U8), valid);
  }
  // p >= 0.5 exactly when a >= 0.
  return mask_and(ge(logits.detach(), zeros({}, logits.dtype(), logits.device())), valid);
}

RssSample Rss::forward(const Tensor& x, const Tensor& valid) const {
  RssSample s;
  s.logits = logits(x, valid);
  s.z = select(s.logits, valid);
  s.log_pi = rss_log_prob(s.logits, s.z, valid);
  s.fraction = rss_selected_fraction(s.z, valid, x.dtype());
  return s;
}

Tensor rss_log_prob(const Tensor& logits, const Tensor& z, const Tensor& valid) {
  ATTN_CHECK(logits.dim() == 2, "rss_log_prob", "expects logits of shape [B, n], got ", shape_str(logits.shape()));
  check_valid(valid, logits.size(0), logits.size(1), "rss_log_prob");
  check_valid(z, logits.size(0), logits.size(1), "rss_log_prob", "selection z");
  // log p = log_sigmoid(a), log(1 - p) = log_sigmoid(-a): no log of a rounded 0.
  Tensor per_token = where(z, log_sigmoid(logits), log_sigmoid(neg(logits)));
  return sum(masked_fill(per_token, mask_not(valid), 0.0), {1});
}

Tensor rss_selected_fraction(const Tensor& z, const Tensor& valid, DType dtype) {
  ATTN_CHECK(z.dim() == 2, "rss_selected_fraction", "expects z of shape [B, n], got ", shape_str(z.shape()));
  check_valid(z, z.size(0), z.size(1), "rss_selected_fraction", "selection z");
  check_valid(valid, z.size(0), z.size(1), "rss_selected_fraction");
  NoGrad no_grad;
  Tensor chosen = sum(cast(mask_and(z, valid), dtype), {1});
  Tensor count = sum(cast(valid, dtype), {1});
  return chosen / maximum(count, ones({}, dtype, z.device()));
}

}  // namespace attn
