// The interface every sentence encoder implements, so heads, training, the
// benchmark and `attn forward` treat all mechanisms alike.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "attn/engine/random.h"
#include "attn/models/config.h"
#include "attn/models/config_schema.h"
#include "attn/nn/module.h"

namespace attn {

// A discrete selection policy's last decision, for REINFORCE: log pi(z) [B]
// (differentiable in the policy parameters) and the share of valid tokens
// selected [B].
struct PolicySelection {
  Tensor log_pi;
  Tensor fraction;
};

struct EncoderOutput {
  Tensor tokens;    // [B, n, token_dim()], exactly zero at padded positions
  Tensor sentence;  // [B, sentence_dim()], the encoder's own readout
};

class Encoder : public Module {
 public:
  // x [B, n, input_dim] (float), mask [B, n] uint8 (1 = valid token). The
  // padded rows of x are selected out (replaced by exact zeros) before the
  // mechanism sees them: whatever they hold, NaN and Inf included, never
  // reaches a valid token, the sentence or a gradient.
  EncoderOutput encode(const Tensor& x, const Tensor& mask);
  // The mechanism itself, on x whose padded rows are exactly zero.
  virtual EncoderOutput encode_tokens(const Tensor& x, const Tensor& mask) = 0;
  virtual int64_t token_dim() const = 0;
  virtual int64_t sentence_dim() const = 0;

  // An encoder with a selection policy trained by REINFORCE (ReSAN's RSS
  // modules) says so here; the trainer gives the policy parameters their own
  // optimiser and reward. The defaults describe an encoder without one.
  virtual bool has_selection_policy() const { return false; }
  // Whether a tensor of parameters() belongs to the policy (theta_r).
  virtual bool is_policy_parameter(const Tensor& /*p*/) const { return false; }
  // The selection of the last forward pass.
  virtual PolicySelection policy_selection() const { return {}; }
  // Warm-up: the policy selects every valid token while on.
  virtual void set_select_all(bool /*on*/) {}
  virtual bool select_all() const { return false; }
};

// What a builder needs besides the config: the input width, the dtype, a
// generator for initialisation and one for dropout/sampling noise (kept
// separate so evaluation noise never shifts initialisation).
struct EncoderContext {
  int64_t input_dim = 0;
  DType dtype = DType::F32;
  Generator* init = nullptr;
  Generator* noise = nullptr;
};

// What the program knows about each encoder: how to build it and what the
// command line, the benchmark and the docs say about it. The registry
// (models/encoder_registry.cpp) is the only list; adding an encoder adds one
// entry there and touches nothing outside models/.
struct EncoderInfo {
  const char* name;     // the config's `encoder` value and `attn train --model`
  const char* summary;  // one line for --help
  std::unique_ptr<Encoder> (*build)(const Config& config, const EncoderContext& ctx);
  // Every config key the builder reads: the one table of its keys.
  const ConfigSchema& (*config_keys)();
  // Run by `attn bench` when --models is not given (the papers' efficiency study).
  bool in_efficiency_study;
  // How the peak memory of a forward and backward pass grows with the
  // sequence length n at fixed batch and width (peak ~ n^exponent), and the
  // same with materialised n x n scores (config materialized_scores = true).
  double memory_growth;
  double memory_growth_materialized;
  // The sentence-pair features its paper feeds the classifier (models/heads.h:
  // "diff_prod" or "absdiff_diff"), the pair head's default.
  const char* pair_features;
};

// The encoder of a config without the key `encoder`.
extern const char* const kDefaultEncoder;

// Every encoder, in the papers' order (the order of help texts and of
// `attn bench`'s default run).
const std::vector<EncoderInfo>& encoder_registry();
// The entry of `name`, or null.
const EncoderInfo* find_encoder(const std::string& name);

// The config's `encoder` value, kDefaultEncoder when the key is absent.
std::string encoder_name(const Config& config);

// Builds the encoder named by config key `encoder` (any registered name).
// Reads the keys it needs; unknown keys are reported by the caller
// (check_model_config in models/model_config_check.h, Config::check_all_used).
std::unique_ptr<Encoder> build_encoder(const Config& config, const EncoderContext& ctx);

// The registered encoder names, sorted (the registry is the only list).
std::vector<std::string> encoder_names();

}  // namespace attn
