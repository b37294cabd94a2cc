// DeepAtt: the deep attentive network of Tan et al. (2017), "Deep Semantic
// Role Labeling with Self-Attention", with its attention sub-layer either
// multi-head scaled dot-product attention (Tan et al.; seed 001 Table 4's
// "Multi-head") or MTSA (seed 001 Table 4's "MTSA"):
//   h_0 = drop(x * sqrt(hidden) + b (+ sinusoidal positions))
//         (x: the word embedding concatenated with the predicate-mask
//         embedding, models/task_model.h; a Linear projection instead of the
//         scale and bias when input_dim != hidden)
//   per layer:  z = LN(h + drop(FFN(h))),  FFN(h) = W_2 drop_relu(relu(W_1 h + b_1)) + b_2
//               h' = LN(z + drop(Attention(z)))
// The FFN sub-layer comes first in each layer, as in the authors' code
// (github XMUNLP/Tagger, DeepAttEncoderLayer). tokens = the last layer's
// output (exactly zero at padded positions); sentence = a two-layer
// multi-dimensional source2token over the tokens, the other encoders'
// readout, so deepatt serves every task. docs/models.md gives each default's
// source.
//
// Config keys: deepatt_config_keys() (deepatt.cpp).
// Children: "input_bias" (parameter, or "proj" Linear), "layer0" ..., each
// with "ffn1", "ffn2", "ln_ffn", "attn" (multi_head: "q", "k", "v", "out";
// mtsa: MtsaLayer's children), "ln_attn"; then "s2t".
#pragma once
#include <memory>
#include <vector>

#include "attn/models/encoder.h"
#include "attn/models/mtsa.h"
#include "attn/models/source2token.h"
#include "attn/nn/dropout.h"
#include "attn/nn/layer_norm.h"
#include "attn/nn/linear.h"

namespace attn {

const ConfigSchema& deepatt_config_keys();

enum class DeepAttAttention { MultiHead, Mtsa };

struct DeepAttOptions {
  int64_t hidden = deepatt_config_keys().default_int("hidden");
  int64_t heads = deepatt_config_keys().default_int("heads");
  int64_t layers = deepatt_config_keys().default_int("layers");
  int64_t ffn_dim = deepatt_config_keys().default_int("ffn_dim");
  DeepAttAttention attention = DeepAttAttention::MultiHead;
  bool positions = true;              // sinusoidal positional encoding on the input
  double residual_keep_prob = deepatt_config_keys().default_float("residual_keep_prob");
  double relu_keep_prob = deepatt_config_keys().default_float("relu_keep_prob");
  double attn_keep_prob = deepatt_config_keys().default_float("attn_keep_prob");
  MtsaOptions mtsa;                   // attention = Mtsa: heads, sigma_t, masks (heads and attn_keep_prob set from above)
};

// Multi-head scaled dot-product self-attention with dropout on the attention
// probabilities (Tan et al.: "dropout is also applied before the attention
// softmax layer"): Q, K, V, out are Linear(D, D) without bias, as in
// models/multi_head.h, whose fused kernel runs whenever no dropout applies.
class DeepAttMultiHead : public Module {
 public:
  DeepAttMultiHead(int64_t features, int64_t heads, double attn_keep_prob, Generator& init, Generator& noise,
                   DType dtype);
  Tensor forward(const Tensor& x, const Tensor& mask) const;

 private:
  int64_t heads_;
  Linear wq_, wk_, wv_, wo_;
  Dropout attn_drop_;
};

class DeepAttLayer : public Module {
 public:
  DeepAttLayer(const DeepAttOptions& o, Generator& init, Generator& noise, DType dtype);
  Tensor forward(const Tensor& h, const Tensor& mask) const;

 private:
  Linear ffn1_, ffn2_;
  LayerNorm ln_ffn_;
  std::unique_ptr<DeepAttMultiHead> multi_head_;
  std::unique_ptr<MtsaLayer> mtsa_;
  LayerNorm ln_attn_;
  Dropout residual_drop_, relu_drop_;
};

class DeepAtt : public Encoder {
 public:
  DeepAtt(int64_t input_dim, const DeepAttOptions& options, Generator& init, Generator& noise,
          DType dtype = DType::F32);
  EncoderOutput encode_tokens(const Tensor& x, const Tensor& mask) override;
  int64_t token_dim() const override { return options_.hidden; }
  int64_t sentence_dim() const override { return options_.hidden; }

 private:
  int64_t input_dim_;
  DeepAttOptions options_;
  Tensor input_bias_;
  std::unique_ptr<Linear> proj_;
  std::vector<std::unique_ptr<DeepAttLayer>> layers_;
  Dropout input_drop_;
  Source2Token s2t_;
};

std::unique_ptr<Encoder> build_deepatt_encoder(const Config& config, const EncoderContext& ctx);

}  // namespace attn
