// The Transformer encoder baseline (the papers' "Multi-head"; seed 003 Eq.
// 1-5): input projection (only when input_dim != hidden), plus sinusoidal
// positional encoding, then `layers` post-norm layers
//   Z  = LN(H + drop(MHA(H)))
//   H' = LN(Z + drop(FFN(Z))),   FFN(z) = W_2 relu(W_1 z + b_1) + b_2
// tokens = the last layer's output (exactly zero at padded positions),
// sentence = two-layer multi-dimensional source2token (relu) over the tokens,
// the readout of the other encoders.
//
// Config keys: transformer_config_keys() (transformer.cpp). The default
// heads give d_h = 30, the Multi-Scale Transformer's head width, so the two
// differ only in the attention.
// Children: "proj" (Linear, only when input_dim != hidden), "layer0" ...,
// each with "attn" (MultiHeadAttention: q, k, v, out), "ln1", "ffn1", "ffn2",
// "ln2"; then "s2t" (Source2Token over hidden).
#pragma once
#include <memory>
#include <vector>

#include "attn/models/encoder.h"
#include "attn/models/multi_head.h"
#include "attn/models/source2token.h"
#include "attn/nn/dropout.h"
#include "attn/nn/layer_norm.h"

namespace attn {

class TransformerLayer : public Module {
 public:
  TransformerLayer(int64_t hidden, int64_t heads, int64_t ffn_dim, double keep_prob, Generator& init,
                   Generator& noise, DType dtype = DType::F32);
  // h [B, n, hidden], mask [B, n] -> [B, n, hidden], zero at padded positions.
  Tensor forward(const Tensor& h, const Tensor& mask) const;

 private:
  MultiHeadAttention attn_;
  LayerNorm ln1_;
  Linear ffn1_, ffn2_;
  LayerNorm ln2_;
  Dropout drop_;
};

// The config keys of build_transformer_encoder.
const ConfigSchema& transformer_config_keys();

// Starts from the config table's defaults.
struct TransformerOptions {
  int64_t hidden = transformer_config_keys().default_int("hidden");
  int64_t heads = transformer_config_keys().default_int("heads");
  int64_t layers = transformer_config_keys().default_int("layers");
  int64_t ffn_dim = 0;  // 0: 4 * hidden
  double keep_prob = transformer_config_keys().default_float("keep_prob");
};

class Transformer : public Encoder {
 public:
  Transformer(int64_t input_dim, const TransformerOptions& options, Generator& init, Generator& noise,
              DType dtype = DType::F32);
  EncoderOutput encode_tokens(const Tensor& x, const Tensor& mask) override;
  int64_t token_dim() const override { return hidden_; }
  int64_t sentence_dim() const override { return hidden_; }

 private:
  int64_t input_dim_, hidden_;
  std::unique_ptr<Linear> proj_;
  std::vector<std::unique_ptr<TransformerLayer>> layers_;
  Dropout drop_;
  Source2Token s2t_;
};

std::unique_ptr<Encoder> build_transformer_encoder(const Config& config, const EncoderContext& ctx);

}  // namespace attn
