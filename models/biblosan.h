// Bi-BloSAN (seed 002 Sec. 3.2): two fully connected layers with untied
// parameters project the input, x_fw = act(W_fw x + b_fw) and
// x_bw = act(W_bw x + b_bw); a forward and a backward mBloSA (untied) run on
// them; u_bi = [u_fw; u_bw] per token; a two-layer multi-dimensional
// source2token turns u_bi into the sentence vector.
// The block length r comes from the BlockLenRule (models/blosa_block_len.h);
// in auto mode n is the batch's padded length x.size(1).
// Config keys: biblosan_config_keys() (biblosan.cpp).
// Children: "fw_fc", "fw" (MBlosa, forward), "bw_fc", "bw" (MBlosa, backward),
// "s2t" (Source2Token over 2*hidden; over the input width without mBloSA,
// where only it exists).
//
// ablation (Table 3 of seed 002; `full` by default) removes one part:
//   no_local: h leaves both mBloSAs' fusion gates (MBlosaOptions::local_context)
//   no_global: E and its block stages leave both mBloSAs (global_context)
//   no_mblosa: "word embeddings directly followed by a source2token
//     attention": no fc layers, no mBloSA; tokens = the input (zero at
//     padding), s2t over the input width
//   no_mblosa_no_s2t: "word embeddings plus a vanilla attention without q":
//     as no_mblosa with one score per token (Source2Token multi_dim false)
#pragma once
#include <memory>
#include <string>

#include "attn/models/blosa_block_len.h"
#include "attn/models/blosa_mblosa.h"
#include "attn/models/encoder.h"
#include "attn/models/source2token.h"

namespace attn {

// The config keys of build_biblosan_encoder.
const ConfigSchema& biblosan_config_keys();

// The part of Bi-BloSAN that Table 3's ablation rows remove (Full: none).
enum class BiBlosanAblation { Full, NoLocal, NoGlobal, NoMBlosa, NoMBlosaNoSource2Token };
// "full", "no_local", "no_global", "no_mblosa", "no_mblosa_no_s2t"
BiBlosanAblation biblosan_ablation_from_name(const std::string& name);
const char* biblosan_ablation_name(BiBlosanAblation a);

// Starts from the config table's defaults.
struct BiBlosanOptions {
  int64_t hidden = biblosan_config_keys().default_int("hidden");
  Activation activation = activation_from_name(biblosan_config_keys().default_string("activation"));
  double scale_c = biblosan_config_keys().default_float("scale_c");
  bool materialize_scores = biblosan_config_keys().default_bool("materialize_scores");  // see MBlosaOptions
  BlockLenRule block_len;
  BiBlosanAblation ablation = biblosan_ablation_from_name(biblosan_config_keys().default_string("ablation"));
};

class BiBlosan : public Encoder {
 public:
  BiBlosan(int64_t input_dim, const BiBlosanOptions& options, Generator& gen, DType dtype = DType::F32);
  EncoderOutput encode_tokens(const Tensor& x, const Tensor& mask) override;
  int64_t token_dim() const override { return has_mblosa() ? 2 * hidden_ : input_dim_; }
  int64_t sentence_dim() const override { return token_dim(); }
  bool has_mblosa() const { return fw_ != nullptr; }

  // The block length used for a batch padded to n tokens.
  int64_t block_length(int64_t n) const { return rule_.for_length(n); }
  const BlockLenRule& block_len_rule() const { return rule_; }
  // Both exist unless the ablation removes mBloSA (has_mblosa()).
  const MBlosa& forward_mblosa() const;
  const MBlosa& backward_mblosa() const;

 private:
  int64_t input_dim_, hidden_;
  Activation act_;
  BlockLenRule rule_;
  std::unique_ptr<Linear> fw_fc_;
  std::unique_ptr<MBlosa> fw_;
  std::unique_ptr<Linear> bw_fc_;
  std::unique_ptr<MBlosa> bw_;
  std::unique_ptr<Source2Token> s2t_;
};

// Reads the block length keys; throws naming the key for a bad block length setup.
BlockLenRule block_len_rule_from_config(const Config& config);
std::unique_ptr<Encoder> build_biblosan_encoder(const Config& config, const EncoderContext& ctx);

}  // namespace attn
