#include "attn/models/biblosan.h"

#include "attn/engine/error.h"
#include "attn/models/masks.h"
#include "attn/ops/join/join.h"
#include "attn/util/named_values.h"

namespace attn {

namespace {
const NamedValue<BiBlosanAblation> kAblationNames[] = {{BiBlosanAblation::Full, "full"},
                                                     {BiBlosanAblation::NoLocal, "no_local"},
                                                     {BiBlosanAblation::NoGlobal, "no_global"},
                                                     {BiBlosanAblation::NoMBlosa, "no_mblosa"},
                                                     {BiBlosanAblation::NoMBlosaNoSource2Token, "no_mblosa_no_s2t"}};

MBlosaOptions mblosa_options(Direction dir, const BiBlosanOptions& options) {
  MBlosaOptions o;
  o.direction = dir;
  o.activation = options.activation;
  o.scale_c = options.scale_c;
  o.materialize_scores = options.materialize_scores;
  o.local_context = options.ablation != BiBlosanAblation::NoLocal;
  o.global_context = options.ablation != BiBlosanAblation::NoGlobal;
  return o;
}

bool without_mblosa(BiBlosanAblation a) {
  return a == BiBlosanAblation::NoMBlosa || a == BiBlosanAblation::NoMBlosaNoSource2Token;
}

// Runs before any layer is built, so a bad size fails with a clear message.
int64_t checked_hidden(int64_t input_dim, int64_t hidden) {
  ATTN_CHECK(input_dim >= 1 && hidden >= 1, "BiBlosan", "input_dim and hidden must be positive, got ", input_dim,
             " and ", hidden);
  return hidden;
}
}  // namespace

BiBlosanAblation biblosan_ablation_from_name(const std::string& name) {
  return value_from_name(kAblationNames, name, "biblosan", "ablation");
}

const char* biblosan_ablation_name(BiBlosanAblation a) { return name_of_value(kAblationNames, a); }

BiBlosan::BiBlosan(int64_t input_dim, const BiBlosanOptions& options, Generator& gen, DType dtype)
    : input_dim_(input_dim),
      hidden_(checked_hidden(input_dim, options.hidden)),
      act_(options.activation),
      rule_(options.block_len) {
  if (!without_mblosa(options.ablation)) {
    fw_fc_ = std::make_unique<Linear>(input_dim, options.hidden, gen, true, dtype);
    fw_ = std::make_unique<MBlosa>(options.hidden, mblosa_options(Direction::Forward, options), gen, dtype);
    bw_fc_ = std::make_unique<Linear>(input_dim, options.hidden, gen, true, dtype);
    bw_ = std::make_unique<MBlosa>(options.hidden, mblosa_options(Direction::Backward, options), gen, dtype);
    register_module("fw_fc", *fw_fc_);
    register_module("fw", *fw_);
    register_module("bw_fc", *bw_fc_);
    register_module("bw", *bw_);
  }
  s2t_ = std::make_unique<Source2Token>(token_dim(), gen, options.activation, true, dtype,
                                        options.ablation != BiBlosanAblation::NoMBlosaNoSource2Token);
  register_module("s2t", *s2t_);
}

const MBlosa& BiBlosan::forward_mblosa() const {
  ATTN_CHECK(fw_ != nullptr, "BiBlosan", "this model has no mBloSA (ablation without mBloSA)");
  return *fw_;
}

const MBlosa& BiBlosan::backward_mblosa() const {
  ATTN_CHECK(bw_ != nullptr, "BiBlosan", "this model has no mBloSA (ablation without mBloSA)");
  return *bw_;
}

EncoderOutput BiBlosan::encode_tokens(const Tensor& x, const Tensor& mask) {
  ATTN_CHECK(x.dim() == 3 && x.size(2) == input_dim_, "BiBlosan", "expects x of shape [B, n, ", input_dim_,
             "], got ", shape_str(x.shape()));
  ATTN_CHECK(mask.dim() == 2 && mask.size(0) == x.size(0) && mask.size(1) == x.size(1), "BiBlosan", "mask of shape ",
             shape_str(mask.shape()), " does not match x of shape ", shape_str(x.shape()));
  Tensor tokens;
  if (has_mblosa()) {
    const int64_t r = block_length(x.size(1));
    Tensor u_fw = fw_->forward(fw_fc_->forward(x, act_), mask, r);
    Tensor u_bw = bw_->forward(bw_fc_->forward(x, act_), mask, r);
    tokens = concat({u_fw, u_bw}, -1);
  } else {
    tokens = zero_padded(x, mask);  // the word embeddings themselves
  }
  return {tokens, s2t_->forward(tokens, mask)};
}

const ConfigSchema& biblosan_config_keys() {
  using namespace config_limits;
  static const ConfigSchema table(
      "biblosan",
      {int_key("hidden", 300, 1, kWidth, "width of each direction (d_e); tokens and sentence are 2 * hidden wide")
           .as_flag(),
       activation_key("activation", Activation::Relu, "act of the input layers, the fusion gate's F and the readout"),
       float_key_above("scale_c", 5.0, 0, kScale, "c in c tanh(x / c), both attentions"),
       choice_key("ablation", "full", {"full", "no_local", "no_global", "no_mblosa", "no_mblosa_no_s2t"},
                  "the part Table 3 removes: none, h, E, mBloSA, or mBloSA and the multi-dim source2token"),
       bool_key("materialize_scores", false,
                "build the [B, n, n, d] scores (the papers' memory profile) instead of the fused kernel"),
       choice_key("block_len_mode", "", {"auto", "fixed", "distribution"}, "how the block length r is chosen")
           .derived_default("auto; fixed when block_len is set"),
       int_key_without_default("block_len", "unset; fixed needs it", 1, kLength, "r of block_len_mode fixed"),
       float_key_without_default("length_mean", "unset; distribution needs it", 0, kLength, true,
                                 "mu of distribution: the mean sentence length"),
       float_key_without_default("length_std", "unset; distribution needs it", 0, kLength, false,
                                 "sigma of distribution: the standard deviation of the lengths"),
       int_key_without_default("batch_for_r", "unset; distribution needs it", 1, kLength,
                               "B of distribution: the batch size")});
  return table;
}

BlockLenRule block_len_rule_from_config(const Config& config) {
  const ConfigSchema& keys = biblosan_config_keys();
  const std::string mode_name = keys.get_string(config, "block_len_mode", config.has("block_len") ? "fixed" : "auto");
  switch (block_len_mode_from_name(mode_name)) {
    case BlockLenMode::Auto:
      return BlockLenRule::automatic();
    case BlockLenMode::Fixed:
      ATTN_CHECK(config.has("block_len"), "biblosan", "block_len_mode = fixed needs block_len");
      return BlockLenRule::fixed_length(keys.get_int(config, "block_len"));
    case BlockLenMode::Distribution:
      for (const char* key : {"length_mean", "length_std", "batch_for_r"})
        ATTN_CHECK(config.has(key), "biblosan", "block_len_mode = distribution needs ", key);
      return BlockLenRule::distribution(keys.get_float(config, "length_mean"), keys.get_float(config, "length_std"),
                                        keys.get_int(config, "batch_for_r"));
  }
  return BlockLenRule::automatic();
}

std::unique_ptr<Encoder> build_biblosan_encoder(const Config& config, const EncoderContext& ctx) {
  const ConfigSchema& keys = biblosan_config_keys();
  BiBlosanOptions o;
  o.hidden = keys.get_int(config, "hidden");
  o.activation = activation_from_name(keys.get_string(config, "activation"));
  o.scale_c = keys.get_float(config, "scale_c");
  o.materialize_scores = keys.get_bool(config, "materialize_scores");
  o.block_len = block_len_rule_from_config(config);
  o.ablation = biblosan_ablation_from_name(keys.get_string(config, "ablation"));
  return std::make_unique<BiBlosan>(ctx.input_dim, o, *ctx.init, ctx.dtype);
}

}  // namespace attn
