// Bi-BloSAN (seed 002 Sec. 3.2): two fully connected layers with untied
// parameters project the input, x_fw = act(W_fw x + b_fw) and
// x_bw = act(W_bw x + b_bw); a forward and a backward mBloSA (untied) run on
// them; u_bi = [u_fw; u_bw] per token; a two-layer multi-dimensional
// source2token turns u_bi into the sentence vector.
// The block length r comes from the BlockLenRule (models/blosa_block_len.h);
// in auto mode n is the batch's padded length x.size(1).
// Config keys: biblosan_config_keys() (biblosan.cpp).
// Children: "fw_fc", "fw" (MBlosa, forward), "bw_fc", "bw" (MBlosa, backward),
// "s2t" (Source2Token over 2*hidden).
#pragma once
#include "attn/models/blosa_block_len.h"
#include "attn/models/blosa_mblosa.h"
#include "attn/models/encoder.h"
#include "attn/models/source2token.h"

namespace attn {

// The config keys of build_biblosan_encoder.
const ConfigSchema& biblosan_config_keys();

// Starts from the config table's defaults.
struct BiBlosanOptions {
  int64_t hidden = biblosan_config_keys().default_int("hidden");
  Activation activation = activation_from_name(biblosan_config_keys().default_string("activation"));
  double scale_c = biblosan_config_keys().default_float("scale_c");
  bool materialize_scores = biblosan_config_keys().default_bool("materialize_scores");  // see MBlosaOptions
  BlockLenRule block_len;
};

class BiBlosan : public Encoder {
 public:
  BiBlosan(int64_t input_dim, const BiBlosanOptions& options, Generator& gen, DType dtype = DType::F32);
  EncoderOutput encode_tokens(const Tensor& x, const Tensor& mask) override;
  int64_t token_dim() const override { return 2 * hidden_; }
  int64_t sentence_dim() const override { return 2 * hidden_; }

  // The block length used for a batch padded to n tokens.
  int64_t block_length(int64_t n) const { return rule_.for_length(n); }
  const BlockLenRule& block_len_rule() const { return rule_; }
  const MBlosa& forward_mblosa() const { return fw_; }
  const MBlosa& backward_mblosa() const { return bw_; }

 private:
  int64_t input_dim_, hidden_;
  Activation act_;
  BlockLenRule rule_;
  Linear fw_fc_;
  MBlosa fw_;
  Linear bw_fc_;
  MBlosa bw_;
  Source2Token s2t_;
};

// Reads the block length keys; throws naming the key for a bad block length setup.
BlockLenRule block_len_rule_from_config(const Config& config);
std::unique_ptr<Encoder> build_biblosan_encoder(const Config& config, const EncoderContext& ctx);

}  // namespace attn
