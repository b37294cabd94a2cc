// The translation model learns: a tiny Transformer encoder-decoder
// (models/seq2seq_transformer.h), trained with label smoothing, Adam and
// the rsqrt warm-up schedule as t2t trains transformer_base, learns to
// reverse sentences of a 6-word lexicon, with either encoder
// self-attention; greedy decoding of unseen sentences reaches a stated
// exact-match floor (fraction of 100 unseen sentences reversed exactly).
#include <gtest/gtest.h>

#include <vector>

#include "attn/engine/random.h"
#include "attn/models/seq2seq_search.h"
#include "attn/models/seq2seq_transformer.h"
#include "attn/ops/loss/loss_label_smoothing.h"
#include "attn/train/optim/adam.h"
#include "attn/train/optim/lr_schedule.h"

namespace attn {
namespace {

constexpr int64_t kPad = 0, kEos = 1, kFirstWord = 2, kWords = 6;

struct Pair {
  std::vector<int64_t> source, target;
};

// Sentences of 2 to 5 words; the target is the source reversed.
std::vector<Pair> reversal_pairs(int64_t count, uint64_t seed) {
  Generator g(seed);
  std::vector<Pair> out;
  for (int64_t i = 0; i < count; ++i) {
    Pair p;
    const int64_t n = 2 + static_cast<int64_t>(g.uniform() * 4);
    for (int64_t t = 0; t < n; ++t) p.source.push_back(kFirstWord + static_cast<int64_t>(g.uniform() * kWords));
    p.target.assign(p.source.rbegin(), p.source.rend());
    out.push_back(p);
  }
  return out;
}

// int64 [B, width]: the sources, or the targets each ending in eos_id, then pad_id.
Tensor batch_of(const std::vector<Pair>& pairs, bool target) {
  size_t longest = 0;
  for (const Pair& p : pairs) longest = std::max(longest, (target ? p.target : p.source).size());
  const int64_t width = static_cast<int64_t>(longest) + (target ? 1 : 0);
  std::vector<int64_t> ids;
  for (const Pair& p : pairs) {
    std::vector<int64_t> row = target ? p.target : p.source;
    if (target) row.push_back(kEos);
    row.resize(static_cast<size_t>(width), kPad);
    ids.insert(ids.end(), row.begin(), row.end());
  }
  return from_indices(ids, {static_cast<int64_t>(pairs.size()), width});
}

double exact_match_after_training(EncoderSelfAttention attention) {
  Seq2SeqOptions o;
  o.vocab_size = kFirstWord + kWords;
  o.pad_id = kPad;
  o.eos_id = kEos;
  o.hidden = 16;
  o.heads = 2;
  o.encoder_layers = o.decoder_layers = 1;
  o.filter = 32;
  o.prepostprocess_keep = o.attention_keep = o.relu_keep = 1.0;  // a task without noise to overfit
  o.encoder_attention = attention;
  Generator init(3), noise(4);
  Seq2SeqTransformer model(o, init, noise);
  AdamOptions ao;
  ao.beta1 = 0.9;
  ao.beta2 = 0.98;
  ao.eps = 1e-9;
  Adam adam(model.parameters(), ao);
  LrSchedule schedule;
  schedule.kind = LrScheduleKind::RsqrtWarmup;
  schedule.learning_rate = 0.1;  // peak 0.1 * 10 / sqrt(16 * 40) = 0.04
  schedule.warmup_steps = 40;
  schedule.hidden = o.hidden;
  const std::vector<Pair> train = reversal_pairs(4000, 5);
  const int64_t batch = 64, steps = 300;
  for (int64_t s = 0; s < steps; ++s) {
    const std::vector<Pair> b(train.begin() + (s * batch) % 3936, train.begin() + (s * batch) % 3936 + batch);
    const Tensor target = batch_of(b, true);
    adam.set_lr(schedule.at(s));
    adam.zero_grad();
    label_smoothed_cross_entropy(model.forward(batch_of(b, false), target), target, 0.1, kPad).backward();
    adam.step();
  }
  model.set_training(false);
  const std::vector<Pair> test = reversal_pairs(100, 6);
  const std::vector<WordIds> out = greedy_decode(model, batch_of(test, false), 8);
  int64_t exact = 0;
  for (size_t i = 0; i < test.size(); ++i) exact += out[i] == test[i].target;
  return static_cast<double>(exact) / static_cast<double>(test.size());
}

TEST(Seq2SeqLearning, ReversesUnseenSentencesWithMultiHeadEncoder) {
  EXPECT_GE(exact_match_after_training(EncoderSelfAttention::MultiHead), 0.9);  // 1.00 when written
}

TEST(Seq2SeqLearning, ReversesUnseenSentencesWithMtsaEncoder) {
  EXPECT_GE(exact_match_after_training(EncoderSelfAttention::Mtsa), 0.8);  // 0.92 when written
}

}  // namespace
}  // namespace attn
