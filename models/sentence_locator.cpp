#include "attn/models/sentence_locator.h"

#include <limits>
#include <optional>

#include "attn/engine/error.h"
#include "attn/models/masks.h"
#include "attn/ops/binary/binary.h"
#include "attn/ops/dropout/dropout_example_keys.h"
#include "attn/ops/join/join.h"
#include "attn/ops/view/view.h"

namespace attn {

namespace {
constexpr const char* kBlockLen = "block_len";

// The sentence-level fusion's config: the same encoder and keys, except that
// Bi-BloSA's blocks hold `sentence_block_len` sentences (the authors' code
// passes block_len=4 to the output context fusion layer).
Config sentence_fusion_config(const Config& config) {
  Config out = config;
  const EncoderInfo* info = find_encoder(encoder_name(config));
  if (info && info->config_keys().find(kBlockLen))
    out.set(kBlockLen, std::to_string(sentence_locator_config_keys().get_int(config, "sentence_block_len")));
  return out;
}
// Noise keys of the B * S sentence rows: row b * S + k gets key_b * S + k,
// distinct for every (example, sentence) pair.
std::vector<uint64_t> sentence_keys(const std::vector<uint64_t>& example_keys, int64_t sentences) {
  std::vector<uint64_t> out;
  out.reserve(example_keys.size() * static_cast<size_t>(sentences));
  for (uint64_t key : example_keys)
    for (int64_t k = 0; k < sentences; ++k)
      out.push_back(key * static_cast<uint64_t>(sentences) + static_cast<uint64_t>(k));
  return out;
}

std::unique_ptr<Encoder> build_sentence_fusion(const Config& config, int64_t hidden, DType dtype, Generator& init,
                                               Generator& noise) {
  EncoderContext c;
  c.input_dim = 4 * hidden;
  c.dtype = dtype;
  c.init = &init;
  c.noise = &noise;
  return build_encoder(sentence_fusion_config(config), c);
}
}  // namespace

const ConfigSchema& sentence_locator_config_keys() {
  using namespace config_limits;
  static const ConfigSchema table(
      "the sentence locator",
      {int_key("sentence_block_len", 4, 1, kLength,
               "locate task: sentences per block of a Bi-BloSA sentence-level fusion (authors' code: 4)")});
  return table;
}

SentenceLocator::SentenceLocator(const Config& config, int64_t token_dim, int64_t word_dim, int64_t hidden,
                                 Activation act, double keep_prob, DType dtype, Generator& init, Generator& noise)
    : act_(act),
      question_s2t_(word_dim, init, act, true, dtype),
      sentence_s2t_(token_dim, init, act, true, dtype),
      question_map_(word_dim, hidden, init, true, dtype),
      sentence_map_(token_dim, hidden, init, true, dtype),
      sentence_fusion_(build_sentence_fusion(config, hidden, dtype, init, noise)),
      pre_output_(sentence_fusion_->token_dim(), hidden, init, true, dtype),
      // No bias: one shared by every sentence cancels in the softmax over
      // them, so it could never learn (its gradient is exactly zero).
      score_(hidden, 1, init, false, dtype),
      dropout_(keep_prob, noise) {
  // The trainer's REINFORCE trains the sentence encoder's selection policy
  // only; a second one here would never learn.
  ATTN_CHECK(!sentence_fusion_->has_selection_policy(), "SentenceLocator", "the locate task cannot use encoder '",
             encoder_name(config), "': its selection policy is trained by REINFORCE, which reaches only the "
             "sentence encoder, not the sentence-level fusion");
  register_module("question_s2t", question_s2t_);
  register_module("question_map", question_map_);
  register_module("sentence_s2t", sentence_s2t_);
  register_module("sentence_map", sentence_map_);
  register_module("sentence_fusion", *sentence_fusion_);
  register_module("pre_output", pre_output_);
  register_module("score", score_);
  register_module("dropout", dropout_);
}

Tensor SentenceLocator::dense(const Linear& layer, const Tensor& x, Activation act) const {
  return layer.forward(dropout_(x), act);
}

Tensor SentenceLocator::forward(Encoder& sentence_encoder, const Tensor& passage_words, const Tensor& passage_mask,
                                const Tensor& sentences, const Tensor& question_words,
                                const Tensor& question_mask) const {
  ATTN_CHECK(passage_words.dim() == 4, "SentenceLocator", "passage words must be [B, S, m, d], got ",
             shape_str(passage_words.shape()));
  const int64_t b = passage_words.size(0), s = passage_words.size(1), m = passage_words.size(2);
  ATTN_CHECK(passage_mask.dim() == 3 && passage_mask.size(0) == b && passage_mask.size(1) == s &&
                 passage_mask.size(2) == m,
             "SentenceLocator", "passage mask ", shape_str(passage_mask.shape()), " does not match the words ",
             shape_str(passage_words.shape()));
  check_token_mask(sentences, b, s, "SentenceLocator", "sentences");
  check_token_mask(question_mask, b, question_words.size(1), "SentenceLocator", "question mask");

  Tensor sentence_vectors;  // [B * S, token_dim]
  {
    // The sentences run as B * S rows: each gets a noise key of its own,
    // derived from its example's, so its dropout still depends on neither
    // its batch nor a data-parallel split.
    std::optional<ExampleNoiseKeys> per_sentence;
    if (const std::vector<uint64_t>* keys = ExampleNoiseKeys::active()) per_sentence.emplace(sentence_keys(*keys, s));
    const Tensor flat_mask = reshape(passage_mask, {b * s, m});
    const EncoderOutput fused = sentence_encoder.encode(reshape(passage_words, {b * s, m, passage_words.size(3)}),
                                                        flat_mask);
    sentence_vectors = sentence_s2t_.forward(fused.tokens, flat_mask);
  }
  const Tensor u = dense(sentence_map_, reshape(sentence_vectors, {b, s, -1}), act_);
  const Tensor q_vec = dense(question_map_, question_s2t_.forward(question_words, question_mask), act_);
  const Tensor q = expand(unsqueeze(q_vec, 1), u.shape());
  const Tensor c = concat({u, q, u - q, u * q}, 2);
  const Tensor o = dense(pre_output_, sentence_fusion_->encode(c, sentences).tokens, act_);
  const Tensor scores = squeeze(dense(score_, o, Activation::None), 2);
  return masked_fill(scores, mask_not(sentences), -std::numeric_limits<double>::infinity());
}

}  // namespace attn
