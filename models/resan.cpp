#include "attn/models/resan.h"

#include "attn/engine/copy.h"
#include "attn/engine/error.h"
#include "attn/models/attention_trace.h"
#include "attn/models/disa.h"
#include "attn/models/iterative_sampling.h"
#include "attn/models/masks.h"
#include "attn/ops/binary/binary.h"
#include "attn/ops/join/join.h"
#include "attn/ops/matmul/matmul.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/ops/view/view.h"
#include "attn/util/named_values.h"

namespace attn {

namespace {

void check_selection(const Tensor& t, const char* what, int64_t b, int64_t n) {
  check_token_mask(t, b, n, "resa", what);
}

const NamedValue<ResaVariant> kResaVariantNames[] = {
    {ResaVariant::Full, "full"},
    {ResaVariant::NoUnselectedHeads, "no_unselected_heads"},
    {ResaVariant::SharedRss, "shared_rss"},
    {ResaVariant::NoHardAttention, "no_hard_attention"},
    {ResaVariant::NoSoftSelfAttention, "no_soft_self_attention"},
    {ResaVariant::NoAttentions, "no_attentions"}};
const NamedValue<SamplerKind> kSamplerKindNames[] = {{SamplerKind::Parallel, "parallel"},
                                                     {SamplerKind::Iterative, "iterative"}};
const NamedValue<UnselectedHeadPool> kUnselectedHeadPoolNames[] = {
    {UnselectedHeadPool::AllTokens, "all_tokens"}, {UnselectedHeadPool::SelectedDependents, "selected_dependents"}};

}  // namespace

ResaVariant resa_variant_from_name(const std::string& name) {
  return value_from_name(kResaVariantNames, name, "resan", "resa_variant");
}

const char* resa_variant_name(ResaVariant v) { return name_of_value(kResaVariantNames, v); }

bool has_hard_attention(ResaVariant v) { return v != ResaVariant::NoHardAttention && v != ResaVariant::NoAttentions; }

bool has_soft_self_attention(ResaVariant v) {
  return v != ResaVariant::NoSoftSelfAttention && v != ResaVariant::NoAttentions;
}

SamplerKind sampler_kind_from_name(const std::string& name) {
  return value_from_name(kSamplerKindNames, name, "resan", "rss_kind");
}

const char* sampler_kind_name(SamplerKind k) { return name_of_value(kSamplerKindNames, k); }

UnselectedHeadPool unselected_head_pool_from_name(const std::string& name) {
  return value_from_name(kUnselectedHeadPoolNames, name, "resan", "unselected_head_pool");
}

Tensor resa_attention_mask(const Tensor& valid, Direction dir, const Tensor& z_head, const Tensor& z_dep) {
  ATTN_CHECK(valid.dtype() == DType::U8 && valid.dim() == 2, "resa", "valid must be uint8 [B, n], got ",
             dtype_name(valid.dtype()), " ", shape_str(valid.shape()));
  const int64_t b = valid.size(0), n = valid.size(1);
  check_selection(z_head, "z_head", b, n);
  check_selection(z_dep, "z_dep", b, n);
  Tensor selected = mask_and(unsqueeze(z_head, 2), unsqueeze(z_dep, 1));  // [B, n, n]
  return mask_and(pair_mask(valid, direction_mask(n, dir)), selected);
}

Tensor unselected_head_context(const Tensor& h, const Tensor& valid, const Tensor& z_head, const Tensor& z_dep,
                               UnselectedHeadPool pool_over) {
  ATTN_CHECK(h.dim() == 3, "resa", "expects h of shape [B, n, d], got ", shape_str(h.shape()));
  const int64_t b = h.size(0), n = h.size(1);
  check_selection(valid, "valid", b, n);
  check_selection(z_head, "z_head", b, n);
  check_selection(z_dep, "z_dep", b, n);
  Tensor heads_off = mask_and(valid, mask_not(z_head));
  Tensor deps = pool_over == UnselectedHeadPool::AllTokens ? valid : mask_and(valid, z_dep);
  // Row i averages over columns j: i an unselected head, j a pooled token, j != i.
  Tensor pool =
      mask_and(mask_and(unsqueeze(heads_off, 2), unsqueeze(deps, 1)), direction_mask(n, Direction::None).to(h.device()));
  Tensor weights = cast(pool, h.dtype());
  Tensor count = sum(weights, {2}, true);  // [B, n, 1]
  // The mean's 1 / count goes into the [B, n, n] weights, not onto the
  // [B, n, d] product (a pass less each way).
  return matmul(weights / maximum(count, ones({}, h.dtype(), h.device())), h);
}

Resa::Resa(int64_t input_dim, int64_t features, const ResaOptions& options, Generator& init, Generator& noise,
           DType dtype)
    : options_(options),
      features_(features),
      fc_(input_dim, features, init, true, dtype),
      w_head_(features, features, init, false, dtype),
      w_dep_(features, features, init, false, dtype),
      gate_(features, init, dtype),
      dropout_(options.keep_prob, noise) {
  ATTN_CHECK(options.scale_c > 0, "resa", "scale c must be positive, got ", options.scale_c);
  register_module("fc", fc_);
  register_module("w_head", w_head_);
  register_module("w_dep", w_dep_);
  bias_ = register_parameter("bias", zeros({features}, dtype));
  register_module("gate", gate_);
  register_module("dropout", dropout_);
}

Tensor Resa::forward(const Tensor& x, const Tensor& valid, const Tensor& z_head, const Tensor& z_dep) const {
  ATTN_CHECK(x.dim() == 3 && x.size(2) == fc_.weight.size(1), "resa", "expects x of shape [B, n, ", fc_.weight.size(1),
             "], got ", shape_str(x.shape()));
  const int64_t b = x.size(0), n = x.size(1);
  check_selection(valid, "valid", b, n);
  AttentionTraceScope trace_scope(direction_name(options_.direction));
  Tensor mask = resa_attention_mask(valid, options_.direction, z_head, z_dep);
  // Zeroing padded h keeps every product with a masked weight finite.
  Tensor h = zero_padded(fc_.forward(x, options_.activation), valid);
  Tensor hd = dropout_(h);
  // Only selected heads' and dependents' rows of the two products take part
  // in a pair (score_terms skips the others).
  const ScoreTerms terms = score_terms(hd, w_head_.weight, bias_, w_dep_.weight, mask);
  Tensor s = multi_dim_masked_attention(h, terms.query, terms.key, Tensor(), mask, options_.scale_c,
                                        options_.materialize_scores);
  // Selected heads' rows of the fallback are zero and unselected heads' rows
  // of s are zero (no valid key), so the sum picks one per row.
  if (options_.keep_unselected) s = s + unselected_head_context(h, valid, z_head, z_dep, options_.pool);
  Tensor u = gate_.forward(h, s);
  // Fig. 3's gate values F, recomputed from the gate's parameters only while
  // `attn explain` records.
  trace_attention("fusion_gate", [&] { return gate_.gate_values(h, s); });
  return zero_padded(u, options_.keep_unselected ? valid : mask_and(valid, z_head));
}

Resan::Resan(int64_t input_dim, const ResanOptions& options, Generator& init, Generator& noise, DType dtype)
    : options_(options), input_dim_(input_dim) {
  ATTN_CHECK(input_dim > 0 && options.hidden > 0 && options.rss_hidden > 0, "resan",
             "input_dim, hidden and rss_hidden must be positive, got ", input_dim, ", ", options.hidden, " and ",
             options.rss_hidden);
  const ResaVariant v = options.variant;
  // The readout is initialised first and registered last: the order of the
  // init generator's draws and of the parameter names of the full model.
  if (v != ResaVariant::NoAttentions)
    s2t_ = std::make_unique<Source2Token>(token_dim(), init, options.activation, true, dtype);
  if (has_hard_attention(v)) {
    // Without soft self-attention there are no heads and dependents to tell
    // apart: one RSS selects the tokens the readout sees.
    const bool one = v == ResaVariant::SharedRss || v == ResaVariant::NoSoftSelfAttention;
    rss_head_ = make_sampler(init, noise, dtype);
    register_module(one ? "rss" : "rss_head", *rss_head_);
    if (!one) {
      rss_dep_ = make_sampler(init, noise, dtype);
      register_module("rss_dep", *rss_dep_);
    }
  }
  if (has_soft_self_attention(v)) {
    ResaOptions ro;
    ro.activation = options.activation;
    ro.scale_c = options.scale_c;
    ro.materialize_scores = options.materialize_scores;
    ro.keep_unselected = v == ResaVariant::Full || v == ResaVariant::NoHardAttention;
    ro.keep_prob = options.keep_prob;
    ro.pool = options.pool;
    if (options.bidirectional) {
      ro.direction = Direction::Forward;
      fw_ = std::make_unique<Resa>(input_dim, options.hidden, ro, init, noise, dtype);
      ro.direction = Direction::Backward;
      bw_ = std::make_unique<Resa>(input_dim, options.hidden, ro, init, noise, dtype);
      register_module("fw", *fw_);
      register_module("bw", *bw_);
    } else {
      ro.direction = Direction::None;
      fw_ = std::make_unique<Resa>(input_dim, options.hidden, ro, init, noise, dtype);
      register_module("resa", *fw_);
    }
  }
  if (s2t_) register_module("s2t", *s2t_);
}

std::unique_ptr<TokenSampler> Resan::make_sampler(Generator& init, Generator& noise, DType dtype) const {
  const ResanOptions& o = options_;
  if (o.rss_kind == SamplerKind::Iterative)
    return std::make_unique<IterativeSampler>(input_dim_, o.rss_hidden, o.rss_hidden, o.activation, o.rss_eval, init,
                                              noise, dtype);
  return std::make_unique<Rss>(input_dim_, o.rss_hidden, o.activation, o.rss_eval, init, noise, dtype);
}

int64_t Resan::token_dim() const {
  if (!has_soft_self_attention(options_.variant)) return input_dim_;
  return (options_.bidirectional ? 2 : 1) * options_.hidden;
}

EncoderOutput Resan::encode_tokens(const Tensor& x, const Tensor& mask) {
  ATTN_CHECK(x.dim() == 3 && x.size(2) == input_dim_, "resan", "expects x of shape [B, n, ", input_dim_, "], got ",
             shape_str(x.shape()));
  ATTN_CHECK(mask.dtype() == DType::U8 && mask.dim() == 2 && mask.size(0) == x.size(0) && mask.size(1) == x.size(1),
             "resan", "mask must be uint8 [", x.size(0), ", ", x.size(1), "], got ", dtype_name(mask.dtype()), " ",
             shape_str(mask.shape()));
  if (rss_head_) {
    RssSample head = rss_head_->forward(x, mask);
    RssSample dep = rss_dep_ ? rss_dep_->forward(x, mask) : head;
    last_.z_head = head.z;
    last_.z_dep = dep.z;
    last_.log_pi = rss_dep_ ? head.log_pi + dep.log_pi : head.log_pi;
    last_.fraction_head = head.fraction;
    last_.fraction_dep = dep.fraction;
    last_.fraction = rss_dep_ ? head.fraction + dep.fraction : head.fraction;
  } else {
    last_ = RssState{};
    last_.z_head = mask;
    last_.z_dep = mask;
  }

  const ResaVariant v = options_.variant;
  if (v == ResaVariant::NoAttentions) return {x, squeeze(masked_mean_over_tokens(x, mask), 1)};
  if (v == ResaVariant::NoSoftSelfAttention) {
    // The selected tokens go to the readout as they are; the others are discarded.
    Tensor selected = mask_and(mask, last_.z_head);
    Tensor tokens = zero_padded(x, selected);
    return {tokens, s2t_->forward(tokens, selected)};
  }
  Tensor tokens = fw_->forward(x, mask, last_.z_head, last_.z_dep);
  if (bw_) tokens = concat({tokens, bw_->forward(x, mask, last_.z_head, last_.z_dep)}, -1);
  // Dropped heads (the two Sec. 3.3 variants) are left out of the readout too.
  const bool keeps_all = v == ResaVariant::Full || v == ResaVariant::NoHardAttention;
  Tensor readout = keeps_all ? mask : mask_and(mask, last_.z_head);
  return {tokens, s2t_->forward(tokens, readout)};
}

void Resan::set_select_all(bool on) {
  if (rss_head_) rss_head_->set_select_all(on);
  if (rss_dep_) rss_dep_->set_select_all(on);
}

bool Resan::select_all() const { return rss_head_ && rss_head_->select_all(); }

bool Resan::is_rss_parameter(const Tensor& p) const {
  for (const TokenSampler* r : {rss_head_.get(), rss_dep_.get()})
    if (r)
      for (const Tensor& q : r->parameters())
        if (q.impl() == p.impl()) return true;
  return false;
}

std::vector<std::pair<std::string, Tensor>> Resan::named_rss_parameters() const {
  std::vector<std::pair<std::string, Tensor>> out;
  for (const auto& np : named_parameters())
    if (is_rss_parameter(np.second)) out.push_back(np);
  return out;
}

std::vector<std::pair<std::string, Tensor>> Resan::named_main_parameters() const {
  std::vector<std::pair<std::string, Tensor>> out;
  for (const auto& np : named_parameters())
    if (!is_rss_parameter(np.second)) out.push_back(np);
  return out;
}

std::vector<Tensor> Resan::rss_parameters() const {
  std::vector<Tensor> out;
  for (const auto& np : named_rss_parameters()) out.push_back(np.second);
  return out;
}

std::vector<Tensor> Resan::main_parameters() const {
  std::vector<Tensor> out;
  for (const auto& np : named_main_parameters()) out.push_back(np.second);
  return out;
}

const ConfigSchema& resan_config_keys() {
  using namespace config_limits;
  static const ConfigSchema table(
      "resan",
      {int_key("hidden", 300, 1, kWidth, "ReSA width; tokens and sentence are 2 * hidden wide (resa_direction both)")
           .as_flag(),
       activation_key("activation", Activation::Relu, "act in h, in the RSS hidden layer and in the readout"),
       float_key_above("scale_c", 5.0, 0, kScale, "c in f = c tanh(. / c)"),
       bool_key("materialize_scores", false,
                "build the [B, n, n, d] scores (the papers' memory profile) instead of the fused kernel"),
       choice_key("unselected_head_pool", "all_tokens", {"all_tokens", "selected_dependents"},
                  "what an unselected head averages: every valid token j != i, or the selected dependents"),
       int_key_without_default("rss_hidden", "= hidden", 1, kWidth, "width of the RSS hidden layer"),
       choice_key("rss_eval", "threshold", {"threshold", "sample"}, "how RSS selects at evaluation"),
       choice_key("rss_kind", "parallel", {"parallel", "iterative"},
                  "the hard attention: RSS (Sec. 3.1) or iterative sampling (appendix A)"),
       choice_key("resa_variant", "full",
                  {"full", "no_unselected_heads", "shared_rss", "no_hard_attention", "no_soft_self_attention",
                   "no_attentions"},
                  "the paper's ReSAN or one of its ablations (Table 2)"),
       choice_key("resa_direction", "both", {"both", "none"},
                  "both: forward and backward blocks (the paper); none: one block"),
       probability_key("keep_prob", 0.75, "dropout keep probability on h in the score terms")});
  return table;
}

std::unique_ptr<Encoder> build_resan_encoder(const Config& config, const EncoderContext& ctx) {
  const ConfigSchema& keys = resan_config_keys();
  ResanOptions o;
  o.hidden = keys.get_int(config, "hidden");
  o.activation = activation_from_name(keys.get_string(config, "activation"));
  o.scale_c = keys.get_float(config, "scale_c");
  o.materialize_scores = keys.get_bool(config, "materialize_scores");
  o.pool = unselected_head_pool_from_name(keys.get_string(config, "unselected_head_pool"));
  o.rss_hidden = keys.get_int(config, "rss_hidden", o.hidden);
  o.rss_eval = rss_eval_from_name(keys.get_string(config, "rss_eval"));
  o.rss_kind = sampler_kind_from_name(keys.get_string(config, "rss_kind"));
  o.variant = resa_variant_from_name(keys.get_string(config, "resa_variant"));
  o.bidirectional = keys.get_string(config, "resa_direction") == "both";
  o.keep_prob = keys.get_float(config, "keep_prob");
  return std::make_unique<Resan>(ctx.input_dim, o, *ctx.init, *ctx.noise, ctx.dtype);
}

}  // namespace attn
