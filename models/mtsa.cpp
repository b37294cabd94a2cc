#include "attn/models/mtsa.h"

#include <algorithm>
#include <cmath>

#include "attn/engine/error.h"
#include "attn/models/masks.h"
#include "attn/ops/binary/binary.h"
#include "attn/ops/matmul/matmul.h"
#include "attn/ops/sigmoid_gate/sigmoid_gate.h"
#include "attn/ops/unary/unary.h"
#include "attn/ops/view/view.h"
#include "attn/util/named_values.h"

namespace attn {

HeadLinear::HeadLinear(int64_t heads, int64_t in_features, int64_t out_features, Generator& gen, bool with_bias,
                       DType dtype) {
  ATTN_CHECK(heads > 0 && in_features > 0 && out_features > 0, "HeadLinear", "sizes must be positive, got heads ",
             heads, ", in ", in_features, ", out ", out_features);
  // Glorot uniform for each head's [in, out] matrix.
  const double a = std::sqrt(6.0 / static_cast<double>(in_features + out_features));
  weight = register_parameter("weight", rand_uniform({heads, in_features, out_features}, -a, a, gen, dtype));
  if (with_bias) bias = register_parameter("bias", zeros({heads, 1, out_features}, dtype));
}

void HeadLinear::check_input(const Tensor& x) const {
  ATTN_CHECK(x.dim() == 4 && x.size(1) == weight.size(0) && x.size(3) == weight.size(1), "HeadLinear",
             "expects x of shape [B, ", weight.size(0), ", n, ", weight.size(1), "], got ", shape_str(x.shape()));
}

Tensor HeadLinear::forward(const Tensor& x, Activation act) const {
  check_input(x);
  // [B, h, n, in] @ [h, in, out], batch axes broadcast.
  return matmul(x, weight, bias, act);
}

Tensor HeadLinear::forward(const Concat& x) const {
  int64_t in = 0;
  bool fits = !x.parts.empty();
  for (const Tensor& p : x.parts) {
    fits = fits && p.dim() == 4 && p.size(1) == weight.size(0);
    in += p.dim() == 4 ? p.size(3) : 0;
  }
  auto shapes = [&] {
    std::string s;
    for (const Tensor& p : x.parts) s += (s.empty() ? "" : ", ") + shape_str(p.shape());
    return s;
  };
  ATTN_CHECK(fits && in == weight.size(1), "HeadLinear", "expects parts of shapes [B, ", weight.size(0),
             ", n, in_i] with sum in_i = ", weight.size(1), ", got ", shapes());
  return matmul(x, weight, bias);
}

namespace {
const NamedValue<MtsaVariant> kMtsaVariantNames[] = {{MtsaVariant::Original, "original"},
                                                     {MtsaVariant::Paper, "paper"}};
}  // namespace

MtsaVariant mtsa_variant_from_name(const std::string& name) {
  return value_from_name(kMtsaVariantNames, name, "mtsa", "mtsa_variant");
}

const char* mtsa_variant_name(MtsaVariant v) { return name_of_value(kMtsaVariantNames, v); }

namespace {
const NamedValue<MtsaAblation> kMtsaAblationNames[] = {{MtsaAblation::Full, "full"},
                                                       {MtsaAblation::NoToken2Token, "no_token2token"},
                                                       {MtsaAblation::NoSource2Token, "no_source2token"},
                                                       {MtsaAblation::NoProposedModules, "no_proposed_modules"}};
}  // namespace

MtsaAblation mtsa_ablation_from_name(const std::string& name) {
  return value_from_name(kMtsaAblationNames, name, "mtsa", "ablation");
}

const char* mtsa_ablation_name(MtsaAblation a) { return name_of_value(kMtsaAblationNames, a); }

bool MtsaLayer::has_token2token() const {
  return options_.ablation == MtsaAblation::Full || options_.ablation == MtsaAblation::NoSource2Token;
}

bool MtsaLayer::has_source2token() const {
  return options_.ablation == MtsaAblation::Full || options_.ablation == MtsaAblation::NoToken2Token;
}

namespace {
MtsaOptions checked(MtsaOptions o, int64_t input_dim, int64_t hidden, Generator* noise) {
  ATTN_CHECK(input_dim > 0, "mtsa", "input dimension must be positive, got ", input_dim);
  ATTN_CHECK(hidden > 0 && o.heads > 0, "mtsa", "hidden and heads must be positive, got hidden ", hidden, ", heads ",
             o.heads);
  ATTN_CHECK(hidden % o.heads == 0, "mtsa", "hidden ", hidden, " is not divisible by heads ", o.heads);
  if (o.head_masks.empty()) o.head_masks = parse_head_masks("", o.heads);
  ATTN_CHECK(static_cast<int64_t>(o.head_masks.size()) == o.heads, "mtsa", "got ", o.head_masks.size(),
             " head masks for ", o.heads, " heads");
  ATTN_CHECK(o.window >= 0, "mtsa", "window radius must be >= 0, got ", o.window);
  ATTN_CHECK(o.attn_keep_prob > 0 && o.attn_keep_prob <= 1, "mtsa", "attn_keep_prob must lie in (0, 1], got ",
             o.attn_keep_prob);
  ATTN_CHECK(o.attn_keep_prob == 1.0 || noise != nullptr, "mtsa", "attention dropout needs a noise generator");
  return o;
}
}  // namespace

MtsaLayer::MtsaLayer(int64_t input_dim, int64_t hidden, const MtsaOptions& options, Generator& gen,
                     Generator* noise, DType dtype)
    : input_dim_(input_dim),
      hidden_(hidden),
      head_dim_(0),
      options_(checked(options, input_dim, hidden, noise)),
      noise_(noise) {
  const int64_t h = options_.heads;
  head_dim_ = hidden / h;
  const int64_t d = head_dim_;
  // Only the parts the ablation keeps are built: a removed part has no
  // parameters (and draws nothing from gen).
  const bool t2t = has_token2token(), s2t = has_source2token();
  if (options_.variant == MtsaVariant::Original) {
    v_full_ = std::make_unique<Linear>(input_dim, hidden, gen, true, dtype);
    register_module("v", *v_full_);
    if (t2t) {
      q_head_ = std::make_unique<HeadLinear>(h, d, d, gen, false, dtype);
      k_head_ = std::make_unique<HeadLinear>(h, d, d, gen, false, dtype);
      register_module("q", *q_head_);
      register_module("k", *k_head_);
    }
  } else {
    if (t2t) {
      q_full_ = std::make_unique<Linear>(input_dim, hidden, gen, false, dtype);
      register_module("q", *q_full_);
    }
    if (t2t || s2t) {  // Eq. 9: S = f_s(k)
      k_full_ = std::make_unique<Linear>(input_dim, hidden, gen, false, dtype);
      register_module("k", *k_full_);
    }
    v_full_ = std::make_unique<Linear>(input_dim, hidden, gen, false, dtype);
    register_module("v", *v_full_);
  }
  if (s2t) {
    s1_ = std::make_unique<HeadLinear>(h, d, d, gen, true, dtype);
    s2_ = std::make_unique<HeadLinear>(h, d, d, gen, true, dtype);
    register_module("s1", *s1_);
    register_module("s2", *s2_);
  }
  if (options_.variant == MtsaVariant::Original) {
    // Without the attention H = v, and g v + (1 - g) H = v: the gate goes too.
    if (options_.ablation != MtsaAblation::NoProposedModules) {
      gate_ = std::make_unique<HeadLinear>(h, 2 * d, d, gen, true, dtype);
      register_module("gate", *gate_);
    }
  } else {
    out_ = std::make_unique<Linear>(hidden, hidden, gen, false, dtype);
    register_module("out", *out_);
  }
}

Tensor MtsaLayer::split_heads(const Tensor& x) const {
  return permute(reshape(x, {x.size(0), x.size(1), options_.heads, head_dim_}), {0, 2, 1, 3});
}

Tensor MtsaLayer::merge_heads(const Tensor& x) const {
  return reshape(permute(x, {0, 2, 1, 3}), {x.size(0), x.size(2), hidden_});
}

MtsaLayer::Heads MtsaLayer::attend(const Tensor& x, const Tensor& valid) const {
  ATTN_CHECK(x.dim() == 3 && x.size(2) == input_dim_, "mtsa", "expects x of shape [B, n, ", input_dim_, "], got ",
             shape_str(x.shape()));
  ATTN_CHECK(valid.dtype() == DType::U8 && valid.dim() == 2 && valid.size(0) == x.size(0) &&
                 valid.size(1) == x.size(1),
             "mtsa", "mask must be uint8 [B, n] matching x ", shape_str(x.shape()), ", got ",
             dtype_name(valid.dtype()), " ", shape_str(valid.shape()));
  Heads hd;
  if (options_.variant == MtsaVariant::Original) {
    hd.v = split_heads(v_full_->forward(x, options_.activation));
    if (q_head_) hd.q = (*q_head_)(hd.v);
    if (k_head_) hd.k = (*k_head_)(hd.v);
    if (s1_) hd.s = (*s2_)(s1_->forward(hd.v, options_.activation));  // S from v, as the released code does
  } else {
    if (q_full_) hd.q = split_heads((*q_full_)(x));
    if (k_full_) hd.k = split_heads((*k_full_)(x));
    hd.v = split_heads((*v_full_)(x));
    if (s1_) hd.s = (*s2_)(s1_->forward(hd.k, options_.activation));  // Eq. 9: f_s(k_i)
  }
  if (options_.ablation == MtsaAblation::NoProposedModules) {
    hd.h = hd.v;  // no attention: each token keeps its own value
    return hd;
  }
  TensorizedAttentionOptions ta;
  ta.sigma_t = options_.sigma_t;
  ta.sigma_s = options_.sigma_s;
  ta.attn_keep_prob = options_.attn_keep_prob;
  ta.gen = noise_;
  ta.training = training();
  // Without token2token q and k go in undefined ("paper" computed k for S).
  const bool t2t = has_token2token();
  hd.h = tensorized_self_attention(t2t ? hd.q : Tensor(), t2t ? hd.k : Tensor(), hd.v, hd.s,
                                   head_mask_tensor(options_.head_masks, x.size(1), options_.window).to(x.device()), valid, ta);
  return hd;
}

Tensor MtsaLayer::forward(const Tensor& x, const Tensor& valid) const {
  Heads hd = attend(x, valid);
  Tensor out;
  if (options_.variant == MtsaVariant::Original) {
    out = gate_ ? merge_heads(sigmoid_gate(gate_->forward(Concat({hd.v, hd.h})), hd.v, hd.h))  // W_g [v; h] + b_g per head
                : merge_heads(hd.h);
  } else {
    out = (*out_)(merge_heads(hd.h));
  }
  return zero_padded(out, valid);
}

Mtsa::Mtsa(int64_t input_dim, int64_t hidden, const MtsaOptions& options, Generator& gen, Generator* noise,
           DType dtype)
    : layer_(input_dim, hidden, options, gen, noise, dtype), s2t_(hidden, gen, options.activation, true, dtype) {
  register_module("mtsa", layer_);
  register_module("s2t", s2t_);
}

EncoderOutput Mtsa::encode_tokens(const Tensor& x, const Tensor& mask) {
  Tensor tokens = layer_.forward(x, mask);
  return {tokens, s2t_.forward(tokens, mask)};
}

namespace {
// The names of a head_masks list; their count against heads is the builder's check.
void check_head_mask_names(const std::string& list) {
  if (list.empty()) return;
  parse_head_masks(list, 1 + static_cast<int64_t>(std::count(list.begin(), list.end(), ',')));
}
}  // namespace

const ConfigSchema& mtsa_config_keys() {
  using namespace config_limits;
  static const ConfigSchema table(
      "mtsa",
      {int_key("hidden", 300, 1, kWidth, "encoder width (tokens and sentence); a multiple of heads").as_flag(),
       int_key("heads", 2, 1, kHeads, "attention heads, each hidden / heads wide").as_flag(),
       activation_key("activation", Activation::Relu, "act of v (original), of S's first layer and of the readout"),
       choice_key("sigma_t", "logsigmoid", {"logsigmoid", "identity"}, "scale function of the token2token scores"),
       choice_key("sigma_s", "identity", {"identity", "logsigmoid"}, "scale function of the source2token scores"),
       choice_key("mtsa_variant", "original", {"original", "paper"},
                  "original: the released code's projections; paper: Eq. 7, 9 and 13"),
       choice_key("ablation", "full", {"full", "no_token2token", "no_source2token", "no_proposed_modules"},
                  "the part Table 3 removes: none, R (Eq. 8), S (Eq. 9), or the whole attention (H = v)"),
       text_key("head_masks", "", "forward, backward, none or window, comma-separated", check_head_mask_names,
                "the heads' positional masks, one per head or one for all")
           .derived_default("first half forward, second half backward"),
       int_key("window", 2, 0, kLength, "radius of window masks: |i - j| <= window"),
       probability_key("attn_keep_prob", 1.0, "attention dropout keep probability (1: off)")});
  return table;
}

std::unique_ptr<Encoder> build_mtsa_encoder(const Config& config, const EncoderContext& ctx) {
  const ConfigSchema& keys = mtsa_config_keys();
  MtsaOptions o;
  const int64_t hidden = keys.get_int(config, "hidden");
  o.heads = keys.get_int(config, "heads");
  o.activation = activation_from_name(keys.get_string(config, "activation"));
  o.sigma_t = sigma_t_from_name(keys.get_string(config, "sigma_t"));
  o.sigma_s = sigma_t_from_name(keys.get_string(config, "sigma_s"));
  o.variant = mtsa_variant_from_name(keys.get_string(config, "mtsa_variant"));
  o.ablation = mtsa_ablation_from_name(keys.get_string(config, "ablation"));
  o.head_masks = parse_head_masks(keys.get_string(config, "head_masks", ""), o.heads);
  o.window = keys.get_int(config, "window");
  o.attn_keep_prob = keys.get_float(config, "attn_keep_prob");
  return std::make_unique<Mtsa>(ctx.input_dim, hidden, o, *ctx.init, ctx.noise, ctx.dtype);
}

}  // namespace attn
