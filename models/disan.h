// DiSAN: forward and backward DiSA (untied parameters) over the same input,
// concatenated per token, then a two-layer multi-dimensional source2token.
// Config keys: disan_config_keys() (disan.cpp).
// Children: "fw", "bw" (Disa), "s2t" (Source2Token over 2*hidden).
#pragma once
#include "attn/models/disa.h"
#include "attn/models/encoder.h"
#include "attn/models/source2token.h"

namespace attn {

class Disan : public Encoder {
 public:
  Disan(int64_t input_dim, int64_t hidden, Activation act, double scale_c, Generator& gen, DType dtype = DType::F32,
        bool materialize_scores = false);
  EncoderOutput encode_tokens(const Tensor& x, const Tensor& mask) override;
  int64_t token_dim() const override { return 2 * hidden_; }
  int64_t sentence_dim() const override { return 2 * hidden_; }

 private:
  int64_t hidden_;
  Disa fw_, bw_;
  Source2Token s2t_;
};

const ConfigSchema& disan_config_keys();
std::unique_ptr<Encoder> build_disan_encoder(const Config& config, const EncoderContext& ctx);

}  // namespace attn
