// The floor every attention model should beat: per-token features are the
// inputs themselves, the sentence is their mean over valid positions.
#pragma once
#include "attn/models/encoder.h"

namespace attn {

class BagOfWords : public Encoder {
 public:
  explicit BagOfWords(int64_t input_dim) : dim_(input_dim) {}
  EncoderOutput encode_tokens(const Tensor& x, const Tensor& mask) override;
  int64_t token_dim() const override { return dim_; }
  int64_t sentence_dim() const override { return dim_; }

 private:
  int64_t dim_;
};

// No keys: the bag of words has no settings.
const ConfigSchema& bow_config_keys();
std::unique_ptr<Encoder> build_bow_encoder(const Config& config, const EncoderContext& ctx);

}  // namespace attn
