// The character-level word feature of the sequence-labelling models the
// Multi-Scale Transformer paper compares with (Ma and Hovy 2016, Sec. 2.1):
// each word's characters embedded, dropout, a convolution over them, and
// the max over the word's characters. TaskModel concatenates it to the word
// embedding (config key char_cnn; the settings in docs/models.md).
// Children: "embedding", "dropout", "conv".
#pragma once
#include "attn/engine/random.h"
#include "attn/nn/dropout.h"
#include "attn/nn/embedding.h"
#include "attn/nn/module.h"
#include "attn/nn/token_conv.h"

namespace attn {

struct CharCnnOptions {
  int64_t alphabet = 2;  // characters, padding (id 0) and unknown (id 1) included
  int64_t char_dim = 30;
  int64_t filters = 30;
  int64_t width = 3;
  double keep_prob = 0.5;  // on the character embeddings, before the convolution
};

class CharCnn : public Module {
 public:
  CharCnn(const CharCnnOptions& o, Generator& init, Generator& noise, DType dtype);
  // chars [B, n, L] int64 (0: padding) -> [B, n, filters]: per word, the
  // max over its characters of tanh(conv(embeddings)) (SAME padding,
  // token_conv). Padding characters are selected out of the convolution's
  // windows and of the max; a word without characters (a padding word)
  // reads exactly 0 and passes no gradient.
  Tensor forward(const Tensor& chars) const;
  int64_t output_dim() const { return filters_; }

 private:
  int64_t filters_;
  Embedding embedding_;
  Dropout dropout_;
  TokenConv conv_;
};

}  // namespace attn
