// ReSA, reinforced self-attention (seed 004 Sec. 3.2, Eqs. 8-15), and ReSAN,
// the sentence encoder built on it (Sec. 3.3). Per ReSA block, given the
// head and dependent selections z_head, z_dep of two RSS modules (models/rss.h):
//   h = act(W_h x + b_h)                       (DiSA's input projection; the
//                                               paper writes Eqs. 4-15 on x)
//   f(h_i, h_j) = c * tanh((W_head h_i + W_dep h_j + b) / c)   query i, key j
//   M_ij = 0 iff valid_i, valid_j, z_head_i = z_dep_j = 1, i != j and the
//          direction allows j for i (else -inf)                (Eqs. 10-11)
//   s_i = sum_j softmax_j(f(h_i, h_j) + M_ij) * h_j, per feature (Eqs. 12-13)
//   an unselected head i (z_head_i = 0) instead gets the mean of h_j over
//          every valid token j != i: its scores are all -inf, "which leads
//          to the equal probabilities ... mean-pooling over all dependent
//          tokens" (Sec. 3.2); unselected_head_pool = selected_dependents
//          averages over the selected dependents j != i only (0 if none)
//   F = sigmoid(W_f [h; s] + b_f),  u = F * h + (1 - F) * s    (Eqs. 14-15)
// ReSAN: two RSS (head, dependent) over the input, a forward and a backward
// ReSA block sharing those selections (untied attention parameters), their
// outputs concatenated per token, then a two-layer source2token readout.
// The hard attention is RSS (rss_kind = parallel) or the iterative sampling
// of the paper's appendix A (rss_kind = iterative, models/iterative_sampling.h).
// Table 2's ablations (resa_variant, see ResaVariant below) remove parts.
//
// Config keys: resan_config_keys() (resan.cpp); keep_prob is the dropout on
// h where it enters the alignment scores.
// Children: "rss_head", "rss_dep" (or "rss" for shared_rss and
// no_soft_self_attention; none without hard attention), "fw" and "bw" (or
// "resa" for resa_direction = none; none without soft self-attention), "s2t"
// (none for no_attentions). A ReSA block has "fc" (W_h, b_h), "w_head",
// "w_dep" (no biases), parameter "bias" (b), "gate.proj" (W_f, b_f) and the
// parameterless "dropout".
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "attn/models/encoder.h"
#include "attn/models/masks.h"
#include "attn/models/rss.h"
#include "attn/models/source2token.h"
#include "attn/nn/dropout.h"
#include "attn/nn/fusion_gate.h"

namespace attn {

// The paper's ReSAN and the rows of its ablation study (Table 2):
// full: the paper's ReSAN. no_unselected_heads: unselected heads get no
// context and are dropped (zero output, left out of the readout).
// shared_rss: one RSS selects heads and dependents ("w/o dependency
// restricted"); as the paper says of both variants, unselected heads are dropped.
// no_hard_attention: no RSS; every valid token is head and dependent (the
// ReSA blocks are DiSA's blocks), and there is no selection policy.
// no_soft_self_attention: no ReSA blocks; one RSS selects tokens of x and the
// source2token attention reads the selected ones (tokens: x at selected
// tokens, 0 elsewhere).
// no_attentions: neither; the sentence is the mean of x over valid tokens.
enum class ResaVariant { Full, NoUnselectedHeads, SharedRss, NoHardAttention, NoSoftSelfAttention, NoAttentions };
bool has_hard_attention(ResaVariant v);
bool has_soft_self_attention(ResaVariant v);
// Which hard attention selects tokens: RSS (Sec. 3.1) or iterative sampling (appendix A).
enum class SamplerKind { Parallel, Iterative };
SamplerKind sampler_kind_from_name(const std::string& name);
const char* sampler_kind_name(SamplerKind k);
// What an unselected head's context averages (see the top of this file).
enum class UnselectedHeadPool { AllTokens, SelectedDependents };
UnselectedHeadPool unselected_head_pool_from_name(const std::string& name);
ResaVariant resa_variant_from_name(const std::string& name);
const char* resa_variant_name(ResaVariant v);

struct ResaOptions {
  Direction direction = Direction::None;
  Activation activation = Activation::Relu;
  double scale_c = 5.0;
  // true: build the [B, n, n, d] score tensor from elementwise ops (the
  // papers' memory profile); false: the fused kernel (ops/multi_dim_attention/multi_dim_attention.h).
  bool materialize_scores = false;
  bool keep_unselected = true;  // false: unselected heads output zeros
  UnselectedHeadPool pool = UnselectedHeadPool::AllTokens;
  double keep_prob = 1.0;
};

class Resa : public Module {
 public:
  Resa(int64_t input_dim, int64_t features, const ResaOptions& options, Generator& init, Generator& noise,
       DType dtype = DType::F32);
  // x [B, n, input_dim], valid / z_head / z_dep uint8 [B, n] -> u [B, n, features],
  // zero at padded positions (and at unselected heads when !keep_unselected).
  Tensor forward(const Tensor& x, const Tensor& valid, const Tensor& z_head, const Tensor& z_dep) const;
  int64_t features() const { return features_; }

 private:
  ResaOptions options_;
  int64_t features_;
  Linear fc_, w_head_, w_dep_;
  Tensor bias_;
  ConcatGate gate_;
  Dropout dropout_;
};

// [B, n, n] uint8, query-major: head i may attend to dependent j.
Tensor resa_attention_mask(const Tensor& valid, Direction dir, const Tensor& z_head, const Tensor& z_dep);
// [B, n, d]: for every valid unselected head i the mean of h_j over the valid
// tokens j != i (AllTokens) or the valid selected dependents j != i
// (SelectedDependents), 0 when there is none; 0 on every other row.
Tensor unselected_head_context(const Tensor& h, const Tensor& valid, const Tensor& z_head, const Tensor& z_dep,
                               UnselectedHeadPool pool = UnselectedHeadPool::AllTokens);

// What the RSS modules chose in the last encode() call, for REINFORCE.
// Without hard attention z_head = z_dep = the mask and the rest is undefined.
struct RssState {
  Tensor z_head, z_dep;                 // uint8 [B, n] (equal for shared_rss and no_soft_self_attention)
  Tensor log_pi;                        // [B] log pi(z_head) + log pi(z_dep) (once for shared_rss)
  Tensor fraction;                      // [B] sum of the two fractions below (the one for shared_rss):
                                        //   the paper's sum of z over len(x), both modules counted
  Tensor fraction_head, fraction_dep;   // [B] selected / valid tokens
};

// The config keys of build_resan_encoder.
const ConfigSchema& resan_config_keys();

// Starts from the config table's defaults.
struct ResanOptions {
  int64_t hidden = resan_config_keys().default_int("hidden");
  Activation activation = activation_from_name(resan_config_keys().default_string("activation"));
  double scale_c = resan_config_keys().default_float("scale_c");
  bool materialize_scores = resan_config_keys().default_bool("materialize_scores");  // see ResaOptions
  UnselectedHeadPool pool = unselected_head_pool_from_name(resan_config_keys().default_string("unselected_head_pool"));
  int64_t rss_hidden = hidden;
  RssEval rss_eval = rss_eval_from_name(resan_config_keys().default_string("rss_eval"));
  SamplerKind rss_kind = sampler_kind_from_name(resan_config_keys().default_string("rss_kind"));
  ResaVariant variant = resa_variant_from_name(resan_config_keys().default_string("resa_variant"));
  bool bidirectional = resan_config_keys().default_string("resa_direction") == "both";
  double keep_prob = resan_config_keys().default_float("keep_prob");
};

class Resan : public Encoder {
 public:
  Resan(int64_t input_dim, const ResanOptions& options, Generator& init, Generator& noise, DType dtype = DType::F32);
  EncoderOutput encode_tokens(const Tensor& x, const Tensor& mask) override;
  int64_t token_dim() const override;
  int64_t sentence_dim() const override { return token_dim(); }

  // The RSS modules are the selection policy (Encoder's REINFORCE hooks);
  // without hard attention there is none.
  bool has_selection_policy() const override { return rss_head_ != nullptr; }
  bool is_policy_parameter(const Tensor& p) const override { return is_rss_parameter(p); }
  PolicySelection policy_selection() const override { return {last_.log_pi, last_.fraction}; }

  // Warm-up (Sec. 4): every RSS selects every valid token, in every mode.
  void set_select_all(bool on) override;
  bool select_all() const override;
  const RssState& last_selection() const { return last_; }
  const ResanOptions& options() const { return options_; }

  // The RSS parameters (theta_r, trained by REINFORCE) and the rest
  // (theta_s, trained on the supervised loss); together they are parameters().
  std::vector<std::pair<std::string, Tensor>> named_rss_parameters() const;
  std::vector<std::pair<std::string, Tensor>> named_main_parameters() const;
  std::vector<Tensor> rss_parameters() const;
  std::vector<Tensor> main_parameters() const;

 private:
  bool is_rss_parameter(const Tensor& p) const;

  std::unique_ptr<TokenSampler> make_sampler(Generator& init, Generator& noise, DType dtype) const;

  ResanOptions options_;
  int64_t input_dim_;
  // Null where the variant has none: rss_dep_ for one RSS, both without hard
  // attention; bw_ for resa_direction = none, both without soft self-attention.
  std::unique_ptr<TokenSampler> rss_head_, rss_dep_;
  std::unique_ptr<Resa> fw_, bw_;
  std::unique_ptr<Source2Token> s2t_;  // null for no_attentions
  RssState last_;
};

std::unique_ptr<Encoder> build_resan_encoder(const Config& config, const EncoderContext& ctx);

}  // namespace attn
