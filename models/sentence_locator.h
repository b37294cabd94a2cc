// The sentence-locating reader of seed 002 App. B (Fig. 7): which sentence of
// a passage holds the answer to a question (SQuAD turned into a choice among
// the passage's sentences). The context fusion is any registered encoder:
//   u_k = act(W_u s2t(fusion(s_k)))       each sentence, shared parameters
//   q   = act(W_q s2t(q_1..q_l))          the question's word embeddings
//   c_k = [u_k; q; u_k - q; u_k * q]      (Eq. 24)
//   o_k = act(W_o fusion'(c)_k)           a second context fusion over sentences
//   score_k = w^T o_k                     padding sentences selected out (-inf)
// Each dense layer reads its input through dropout, as the authors'
// bn_dense_layer does; act is relu by default (the papers' "unspecified
// activation functions"). An encoder with a selection policy (ReSAN) is refused:
// REINFORCE trains the sentence encoder's policy only. Children: "question_s2t", "question_map",
// "sentence_s2t", "sentence_map", "sentence_fusion", "pre_output", "score".
#pragma once
#include <memory>

#include "attn/models/encoder.h"
#include "attn/models/source2token.h"
#include "attn/nn/dropout.h"
#include "attn/nn/linear.h"

namespace attn {

// The locator's own keys (beside the task model's and the encoder's).
const ConfigSchema& sentence_locator_config_keys();

class SentenceLocator : public Module {
 public:
  // token_dim: the width of the sentence encoder's token outputs; word_dim:
  // the word embeddings' width. `hidden`, `act` and `keep_prob` come from
  // the task model's head_hidden, head_activation and keep_prob (act is
  // that of the dense maps and the source2token layers); the second context fusion is built
  // from `config` (the same encoder) on 4 * hidden wide inputs.
  SentenceLocator(const Config& config, int64_t token_dim, int64_t word_dim, int64_t hidden, Activation act,
                  double keep_prob, DType dtype, Generator& init, Generator& noise);

  // passage_words [B, S, m, word_dim] embedded, passage_mask [B, S, m],
  // sentences [B, S] uint8 (1 = real sentence; a padding sentence's token
  // mask still has one valid position), question_words [B, l, word_dim],
  // question_mask [B, l]. Returns scores [B, S], -inf at padding sentences.
  Tensor forward(Encoder& sentence_encoder, const Tensor& passage_words, const Tensor& passage_mask,
                 const Tensor& sentences, const Tensor& question_words, const Tensor& question_mask) const;

  Encoder& sentence_fusion() { return *sentence_fusion_; }

 private:
  Tensor dense(const Linear& layer, const Tensor& x, Activation act) const;

  Activation act_;
  Source2Token question_s2t_, sentence_s2t_;
  Linear question_map_, sentence_map_;
  std::unique_ptr<Encoder> sentence_fusion_;
  Linear pre_output_, score_;
  Dropout dropout_;
};

}  // namespace attn
