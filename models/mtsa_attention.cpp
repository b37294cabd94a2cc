#include "attn/models/mtsa_attention.h"

#include <cmath>
#include <limits>
#include <sstream>

#include "attn/engine/error.h"
#include "attn/models/attention_trace.h"
#include "attn/models/masks.h"
#include "attn/engine/autograd.h"
#include "attn/ops/binary/binary.h"
#include "attn/engine/copy.h"
#include "attn/ops/dropout/dropout.h"
#include "attn/ops/factorized_attention/factorized_attention.h"
#include "attn/ops/join/join.h"
#include "attn/ops/matmul/matmul.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/ops/separable_attention/separable_attention.h"
#include "attn/ops/softmax/softmax.h"
#include "attn/ops/unary/unary.h"
#include "attn/ops/view/view.h"
#include "attn/util/named_values.h"

namespace attn {

namespace {
const NamedValue<SigmaT> kSigmaTNames[] = {
    {SigmaT::LogSigmoid, "logsigmoid"}, {SigmaT::LogSigmoid, "log_sigmoid"}, {SigmaT::Identity, "identity"}};
const NamedValue<HeadMask> kHeadMaskNames[] = {{HeadMask::Forward, "forward"},   {HeadMask::Forward, "fw"},
                                               {HeadMask::Backward, "backward"}, {HeadMask::Backward, "bw"},
                                               {HeadMask::None, "none"},         {HeadMask::Window, "window"}};
}  // namespace

SigmaT sigma_t_from_name(const std::string& name) { return value_from_name(kSigmaTNames, name, "mtsa", "sigma_t"); }

const char* sigma_t_name(SigmaT s) { return name_of_value(kSigmaTNames, s); }

HeadMask head_mask_from_name(const std::string& name) {
  return value_from_name(kHeadMaskNames, name, "mtsa", "head mask");
}

const char* head_mask_name(HeadMask m) { return name_of_value(kHeadMaskNames, m); }

std::vector<HeadMask> parse_head_masks(const std::string& list, int64_t heads) {
  ATTN_CHECK(heads > 0, "mtsa", "heads must be positive, got ", heads);
  std::vector<HeadMask> masks;
  if (list.empty()) {
    ATTN_CHECK(heads % 2 == 0, "mtsa", "the default head masks (half forward, half backward) need an even number of ",
               "heads, got ", heads, "; set head_masks to choose them explicitly");
    for (int64_t h = 0; h < heads; ++h) masks.push_back(h < heads / 2 ? HeadMask::Forward : HeadMask::Backward);
    return masks;
  }
  std::stringstream in(list);
  std::string item;
  while (std::getline(in, item, ',')) {
    size_t b = item.find_first_not_of(" \t"), e = item.find_last_not_of(" \t");
    masks.push_back(head_mask_from_name(b == std::string::npos ? "" : item.substr(b, e - b + 1)));
  }
  if (masks.size() == 1) return std::vector<HeadMask>(static_cast<size_t>(heads), masks[0]);
  ATTN_CHECK(static_cast<int64_t>(masks.size()) == heads, "mtsa", "head_masks '", list, "' names ", masks.size(),
             " masks for ", heads, " heads (give one per head, or a single one for all)");
  return masks;
}

Tensor head_mask_tensor(const std::vector<HeadMask>& masks, int64_t n, int64_t window_radius) {
  ATTN_CHECK(!masks.empty(), "mtsa", "no head masks");
  std::vector<Tensor> per_head;
  for (HeadMask m : masks) {
    switch (m) {
      case HeadMask::Forward: per_head.push_back(direction_mask(n, Direction::Forward)); break;
      case HeadMask::Backward: per_head.push_back(direction_mask(n, Direction::Backward)); break;
      case HeadMask::None: per_head.push_back(direction_mask(n, Direction::None)); break;
      case HeadMask::Window:
        ATTN_CHECK(window_radius >= 0, "mtsa", "window radius must be >= 0, got ", window_radius);
        per_head.push_back(window_mask(n, window_radius));
        break;
    }
  }
  return stack(per_head, 0);
}

namespace {

// x - max(x over `axis` where allowed), the max taken without gradient: the
// shift cancels exactly in Algorithm 1's ratio. A group with nothing allowed
// is shifted by 0.
Tensor minus_allowed_max(const Tensor& x, const Tensor& blocked, int64_t axis) {
  const double inf = std::numeric_limits<double>::infinity();
  Tensor m = max(masked_fill(x.detach(), blocked, -inf), {axis}, true);
  m = masked_fill(m, eq(m, full({}, -inf, m.dtype(), m.device())), 0.0);
  return x - m;
}

// exp(x) where allowed, exactly 0 where blocked; blocked entries never reach
// exp, so huge or shifted-to-+inf values there cannot overflow.
Tensor masked_exp(const Tensor& x, const Tensor& blocked) {
  return masked_fill(exp(masked_fill(x, blocked, 0.0)), blocked, 0.0);
}

// Eq. 11's p_ji[l] built in full, [B, h, query j, key i, feature l], one
// stable softmax per query and feature: for the attention trace only.
Tensor tensorized_probabilities(const Tensor& r_allowed, const Tensor& s, const Tensor& allowed, SigmaT sigma_t) {
  Tensor t2t = sigma_t == SigmaT::LogSigmoid ? log_sigmoid(r_allowed) : r_allowed;
  Tensor scores = unsqueeze(t2t, -1) + unsqueeze(s, 2);
  return softmax(scores, 3, unsqueeze(allowed, -1));
}

// Whether every query with an allowed key has den >= kMinDenominator
// (ops/factorized_attention/factorized_attention.h) in every feature (one host read of a flag).
// Below it (a query whose allowed terms all lie more than ~44 below the
// per-feature maximum of S) the two-GEMM quotient is wrong in the forward
// pass and grad / den overflows to Inf, which the GEMMs' backward then
// multiplies by the zeros of E_R and E_S: NaN.
bool factorized_is_exact(const Tensor& den, const Tensor& allowed) {
  NoGrad no_grad;
  Tensor has_key = gt(sum(cast(allowed, den.dtype()), {3}, true), zeros({}, den.dtype(), den.device()));
  Tensor small = lt(den.detach(), full({}, kMinDenominator, den.dtype(), den.device()));
  Tensor unsafe = where(has_key, small, zeros({}, DType::U8, den.device()));  // [B, h, n, d_h]
  return sum(cast(unsafe, DType::F64)).to(Device::CPU).item() == 0;
}

}  // namespace

namespace {
// A zero score of v's shape that takes no memory (all strides 0): the term
// Table 3's ablations remove, exp(0) = 1 under the identity scale.
Tensor zero_scores_like(const Tensor& v) {
  return expand(zeros({1, 1, 1, 1}, v.dtype(), v.device()), v.shape());
}
}  // namespace

Tensor tensorized_self_attention(const Tensor& q_in, const Tensor& k_in, const Tensor& v, const Tensor& s_in,
                                 const Tensor& positional, const Tensor& valid,
                                 const TensorizedAttentionOptions& options_in) {
  const char* op = "tensorized_self_attention";
  ATTN_CHECK(v.defined() && v.dim() == 4, op, "v must be [B, h, n, d], got ",
             v.defined() ? shape_str(v.shape()) : std::string("undefined"));
  ATTN_CHECK(q_in.defined() == k_in.defined(), op,
             "q and k must both be given (token2token) or both be omitted (no token2token term)");
  TensorizedAttentionOptions options = options_in;
  if (!q_in.defined()) options.sigma_t = SigmaT::Identity;
  if (!s_in.defined()) options.sigma_s = SigmaT::Identity;
  const Tensor q = q_in.defined() ? q_in : zero_scores_like(v);
  const Tensor k = k_in.defined() ? k_in : zero_scores_like(v);
  const Tensor s = s_in.defined() ? s_in : zero_scores_like(v);
  ATTN_CHECK(q.dim() == 4 && k.shape() == q.shape(), op, "q and k must both be [B, h, n, d], got ",
             shape_str(q.shape()), " and ", shape_str(k.shape()));
  ATTN_CHECK(v.dim() == 4 && s.shape() == v.shape() && v.size(0) == q.size(0) && v.size(1) == q.size(1) &&
                 v.size(2) == q.size(2),
             op, "v and s must be [B, h, n, d_h] matching q ", shape_str(q.shape()), ", got ", shape_str(v.shape()),
             " and ", shape_str(s.shape()));
  const int64_t b = q.size(0), h = q.size(1), n = q.size(2);
  ATTN_CHECK(positional.dtype() == DType::U8 && positional.shape() == Shape({h, n, n}), op,
             "positional mask must be uint8 [h, n, n] = ", shape_str({h, n, n}), ", got ",
             dtype_name(positional.dtype()), " ", shape_str(positional.shape()));
  ATTN_CHECK(valid.dtype() == DType::U8 && valid.shape() == Shape({b, n}), op, "valid must be uint8 [B, n] = ",
             shape_str({b, n}), ", got ", dtype_name(valid.dtype()), " ", shape_str(valid.shape()));
  ATTN_CHECK(options.attn_keep_prob > 0 && options.attn_keep_prob <= 1, op,
             "attention keep probability must lie in (0, 1], got ", options.attn_keep_prob);

  const bool dropout_active = options.training && options.attn_keep_prob < 1.0;
  if (options.fused && !dropout_active && active_attention_trace() == nullptr) {
    FactorizedAttention fused = factorized_attention(q, k, v, s, positional, valid,
                                                     options.sigma_t == SigmaT::LogSigmoid,
                                                     options.sigma_s == SigmaT::LogSigmoid);
    if (fused.exact) return fused.out;
    // Otherwise the composed form below finds the same and takes the per-softmax path.
  }

  const Tensor zero_u8 = zeros({}, DType::U8, valid.device());
  // allowed[b, c, j, i]: query j may attend key i in head c (both real tokens).
  Tensor key_valid = unsqueeze(unsqueeze(valid, 1), 1);     // [B, 1, 1, n]
  Tensor query_valid = unsqueeze(unsqueeze(valid, 1), -1);  // [B, 1, n, 1]
  Tensor allowed = where(key_valid, unsqueeze(positional, 0), zero_u8);
  allowed = where(query_valid, allowed, zero_u8);  // [B, h, n, n]
  Tensor blocked = eq(allowed, zero_u8);
  Tensor padded = eq(query_valid, zero_u8);  // [B, 1, n, 1]: rows of q, k, v and S

  // Padded rows are selected out of every operand before any product: a NaN
  // or Inf there would otherwise reach valid tokens through the GEMMs, in
  // the forward pass or as 0 * NaN in their backward.
  const Tensor qs = masked_fill(q, padded, 0.0), ks = masked_fill(k, padded, 0.0);
  const Tensor vs = masked_fill(v, padded, 0.0), ss = masked_fill(s, padded, 0.0);

  // Steps 3 and 5: token2token weights E_R [B, h, n_query, n_key]. Blocked
  // pairs are selected out before sigma_t, so no gradient passes through them.
  Tensor r = mul_scalar(matmul(qs, transpose(ks, -1, -2)), 1.0 / std::sqrt(static_cast<double>(q.size(3))));
  Tensor r_allowed = masked_fill(r, blocked, 0.0);
  Tensor e_r = options.sigma_t == SigmaT::LogSigmoid ? masked_fill(sigmoid(r_allowed), blocked, 0.0)
                                                     : masked_exp(minus_allowed_max(r_allowed, blocked, 3), blocked);
  trace_attention("token2token", [&] { return e_r; });
  trace_attention("mask", [&] { return allowed; });
  trace_attention("alignment", [&] {
    return tensorized_probabilities(r_allowed, options.sigma_s == SigmaT::LogSigmoid ? log_sigmoid(ss) : ss, allowed,
                                    options.sigma_t);
  });
  // Step 6: source2token weights E_S = exp(sigma_s(S)) [B, h, n_key, d_h].
  Tensor e_s = options.sigma_s == SigmaT::LogSigmoid ? masked_fill(sigmoid(ss), padded, 0.0)
                                                     : masked_exp(minus_allowed_max(ss, padded, 2), padded);

  // Attention dropout's scaled keep masks (E_R's drawn first), applied to the
  // numerator only: the denominator uses the undropped weights.
  Tensor keep_pairs, keep_features;
  if (dropout_active) {
    ATTN_CHECK(options.gen != nullptr, op, "attention dropout needs a generator");
    const double drop = 1.0 - std::sqrt(options.attn_keep_prob);
    keep_pairs = dropout(ones(e_r.shape(), e_r.dtype(), e_r.device()), drop, *options.gen, true);
    keep_features = dropout(ones(e_s.shape(), e_s.dtype(), e_s.device()), drop, *options.gen, true);
  }

  // Step 7.
  Tensor den = matmul(e_r, e_s);
  if (!factorized_is_exact(den, allowed)) {
    // Some query's allowed source2token terms lie beyond the dtype's exp range
    // below the per-feature maximum: compute every softmax with its own shift.
    const int64_t d = v.size(3);
    Tensor a = options.sigma_t == SigmaT::LogSigmoid ? log_sigmoid(r_allowed) : r_allowed;
    auto groups = [b, h](const Tensor& t) { return reshape(t, {b * h, t.size(2), t.size(3)}); };
    Tensor scaled_s = options.sigma_s == SigmaT::LogSigmoid ? log_sigmoid(ss) : ss;
    Tensor out = separable_attention(groups(a), groups(scaled_s), groups(vs), groups(allowed),
                                     keep_pairs.defined() ? groups(keep_pairs) : Tensor(),
                                     keep_features.defined() ? groups(keep_features) : Tensor());
    return reshape(out, {b, h, n, d});
  }
  Tensor num = matmul(keep_pairs.defined() ? e_r * keep_pairs : e_r,
                      keep_features.defined() ? vs * e_s * keep_features : vs * e_s);
  // den is 0 exactly where a query has no allowed key (its output is 0), and
  // at least kMinDenominator elsewhere.
  Tensor positive = gt(den, zeros({}, den.dtype(), den.device()));
  Tensor safe_den = where(positive, den, full({}, 1.0, den.dtype(), den.device()));
  return where(positive, num / safe_den, zeros({}, num.dtype(), num.device()));
}

}  // namespace attn
