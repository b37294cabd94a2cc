// MTSA: multi-mask tensorized self-attention (seeds 000/001, Eq. 7-13,
// Algorithm 1) and the sentence encoder built on it. The attention core is
// models/mtsa_attention.h; this file adds the projections of the two variants.
//
// variant `original` (default; the released code that produced the papers'
// numbers), per head c with d_h = hidden / heads:
//   v = act(W_v x + b_v), split into heads v_c            ("v")
//   q_c = v_c W_q,c   k_c = v_c W_k,c   (no biases)       ("q", "k")
//   S_c = act(v_c W_s1,c + b_s1,c) W_s2,c + b_s2,c        ("s1", "s2")
//   H_c = Algorithm 1 (q_c, k_c, v_c, S_c, mask_c)
//   g_c = sigmoid([v_c; H_c] W_g,c + b_g,c)               ("gate")
//   out = concat_c (g_c * v_c + (1 - g_c) * H_c)
// variant `paper` (Eq. 7, 9, 13):
//   q = W_q x, k = W_k x, v = W_v x (no biases), split into heads   ("q", "k", "v")
//   S_c = act(k_c W_s1,c + b_s1,c) W_s2,c + b_s2,c                  ("s1", "s2")
//   out = W_o concat_c H_c  (no bias)                               ("out")
// Outputs are exactly zero at padded positions.
//
// ablation (Table 3 of seed 001; `full` by default) removes one part:
//   no_token2token: no R (Eq. 8): q (and in `original` k) do not exist and
//     Algorithm 1 runs with E_R = the mask alone ("paper" keeps k for S)
//   no_source2token: no S (Eq. 9): s1, s2 do not exist, E_S = 1
//   no_proposed_modules: no attention at all: H_c = v_c, so only v (and the
//     `paper` variant's output projection) remain; no gate, q, k, s1, s2
// Table 3's "w/o fw&bw masks" is head_masks = none.
//
// Config keys: mtsa_config_keys() (mtsa.cpp), the one table of their types,
// defaults and ranges; docs/models.md explains where each default comes from.
#pragma once
#include <memory>
#include <vector>

#include "attn/engine/random.h"
#include "attn/models/encoder.h"
#include "attn/models/mtsa_attention.h"
#include "attn/models/source2token.h"
#include "attn/nn/activation.h"
#include "attn/nn/linear.h"
#include "attn/ops/matmul/matmul.h"

namespace attn {

// A dense layer with separate weights per head, applied to [B, h, n, in]:
// y[:, c] = x[:, c] W_c + b_c, one batched GEMM for all heads.
// Parameters: "weight" [h, in, out] (Glorot uniform per head), "bias" [h, 1, out] (zeros).
class HeadLinear : public Module {
 public:
  HeadLinear(int64_t heads, int64_t in_features, int64_t out_features, Generator& gen, bool bias = true,
             DType dtype = DType::F32);
  // act(x W + b) per head, one call of ops/matmul/matmul.h matmul, which
  // picks the kernel.
  Tensor forward(const Tensor& x, Activation act = Activation::None) const;
  Tensor operator()(const Tensor& x) const { return forward(x); }
  // The layer over [x1 | x2 | ...] (features concatenated, [B, h, n, in_i]
  // with sum in_i = in), never built.
  Tensor forward(const Concat& x) const;

  Tensor weight;
  Tensor bias;  // undefined without bias

 private:
  void check_input(const Tensor& x) const;
};

enum class MtsaVariant { Original, Paper };
MtsaVariant mtsa_variant_from_name(const std::string& name);  // "original", "paper"
const char* mtsa_variant_name(MtsaVariant v);

// The part of MTSA that Table 3's ablation rows remove (Full: none).
enum class MtsaAblation { Full, NoToken2Token, NoSource2Token, NoProposedModules };
// "full", "no_token2token", "no_source2token", "no_proposed_modules"
MtsaAblation mtsa_ablation_from_name(const std::string& name);
const char* mtsa_ablation_name(MtsaAblation a);

// The config keys of build_mtsa_encoder.
const ConfigSchema& mtsa_config_keys();

// Starts from the config table's defaults.
struct MtsaOptions {
  int64_t heads = mtsa_config_keys().default_int("heads");
  Activation activation = activation_from_name(mtsa_config_keys().default_string("activation"));
  SigmaT sigma_t = sigma_t_from_name(mtsa_config_keys().default_string("sigma_t"));
  SigmaT sigma_s = sigma_t_from_name(mtsa_config_keys().default_string("sigma_s"));
  MtsaVariant variant = mtsa_variant_from_name(mtsa_config_keys().default_string("mtsa_variant"));
  MtsaAblation ablation = mtsa_ablation_from_name(mtsa_config_keys().default_string("ablation"));
  std::vector<HeadMask> head_masks;  // empty: half forward, half backward
  int64_t window = mtsa_config_keys().default_int("window");
  double attn_keep_prob = mtsa_config_keys().default_float("attn_keep_prob");
};

// The MTSA layer: [B, n, input_dim] -> [B, n, hidden].
class MtsaLayer : public Module {
 public:
  // `noise` feeds attention dropout; it may be null when attn_keep_prob == 1.
  MtsaLayer(int64_t input_dim, int64_t hidden, const MtsaOptions& options, Generator& gen, Generator* noise,
            DType dtype = DType::F32);

  // The per-head quantities, all [B, heads, n, d_h]; h is Algorithm 1's H
  // (before the gate / the output projection). Undefined where the ablation
  // removes them: q and k without token2token (`paper` keeps k, S's input),
  // s without source2token, q, k and s without the proposed modules, where
  // h is v itself.
  struct Heads {
    Tensor q, k, v, s, h;
  };
  Heads attend(const Tensor& x, const Tensor& valid) const;
  // x [B, n, input_dim], valid [B, n] uint8 -> [B, n, hidden], zero at padding.
  Tensor forward(const Tensor& x, const Tensor& valid) const;

  int64_t hidden() const { return hidden_; }
  int64_t heads() const { return options_.heads; }
  bool has_token2token() const;
  bool has_source2token() const;
  const MtsaOptions& options() const { return options_; }

 private:
  Tensor split_heads(const Tensor& x) const;    // [B, n, hidden] -> [B, h, n, d_h]
  Tensor merge_heads(const Tensor& x) const;    // [B, h, n, d_h] -> [B, n, hidden]

  int64_t input_dim_, hidden_, head_dim_;
  MtsaOptions options_;
  Generator* noise_;
  std::unique_ptr<Linear> q_full_, k_full_, v_full_, out_;     // full-width projections
  std::unique_ptr<HeadLinear> q_head_, k_head_, s1_, s2_, gate_;  // per-head projections
};

// The MTSA sentence encoder: tokens = the MTSA layer's output (zero at
// padding), sentence = a two-layer multi-dimensional source2token over the
// tokens. Children: "mtsa" (MtsaLayer), "s2t" (Source2Token over hidden).
class Mtsa : public Encoder {
 public:
  Mtsa(int64_t input_dim, int64_t hidden, const MtsaOptions& options, Generator& gen, Generator* noise,
       DType dtype = DType::F32);
  EncoderOutput encode_tokens(const Tensor& x, const Tensor& mask) override;
  int64_t token_dim() const override { return layer_.hidden(); }
  int64_t sentence_dim() const override { return layer_.hidden(); }
  const MtsaLayer& layer() const { return layer_; }

 private:
  MtsaLayer layer_;
  Source2Token s2t_;
};

std::unique_ptr<Encoder> build_mtsa_encoder(const Config& config, const EncoderContext& ctx);

}  // namespace attn
