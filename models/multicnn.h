// Multi-CNN, the CNN baseline of seeds 001 and 002 (Sec. 4: "Multi-CNN:
// Kim (2014), 200D for each of 3-, 4- and 5-grams (600D)"), as a context
// fusion module: one convolution per n-gram width over the tokens (SAME
// padding, token mask), relu, the widths' outputs concatenated per token;
// then the readout the papers put on every baseline, a two-layer
// multi-dimensional source2token over the tokens.
// Config keys: multicnn_config_keys() (multicnn.cpp).
// Children: "conv<k>" (TokenConv of width k) for k = min_width..max_width,
// "s2t" (Source2Token over the concatenation).
#pragma once
#include <memory>
#include <vector>

#include "attn/models/encoder.h"
#include "attn/models/source2token.h"
#include "attn/nn/token_conv.h"

namespace attn {

class MultiCnn : public Encoder {
 public:
  MultiCnn(int64_t input_dim, int64_t filters, int64_t min_width, int64_t max_width, Activation act, Generator& gen,
           DType dtype = DType::F32);
  EncoderOutput encode_tokens(const Tensor& x, const Tensor& mask) override;
  int64_t token_dim() const override { return width_; }
  int64_t sentence_dim() const override { return width_; }

 private:
  int64_t width_;  // filters times the number of n-gram widths
  std::vector<std::unique_ptr<TokenConv>> convs_;
  Source2Token s2t_;
};

const ConfigSchema& multicnn_config_keys();
std::unique_ptr<Encoder> build_multicnn_encoder(const Config& config, const EncoderContext& ctx);

}  // namespace attn
