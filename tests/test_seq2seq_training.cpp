// Training the translation model on an in-memory parallel Dataset
// (train/seq2seq_training.h): an SVO language translated word by word into
// an SOV one (a lexicon of this test's own, with optional adverbs that move
// before the object), learnt from 150 sentences and judged on the 42 unseen
// ones by beam search; batches, the vocabulary, empty lines and bad input.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "attn/engine/random.h"
#include "attn/train/seq2seq_training.h"
#include "test_util.h"

namespace attn {
namespace {

using namespace testing_support;

const std::map<std::string, std::string> kLexicon = {
    {"alice", "alicia"}, {"bob", "bert"},    {"carol", "karla"}, {"sees", "sieht"},  {"likes", "mag"},
    {"helps", "hilft"},  {"calls", "ruft"},  {"tom", "thomas"},  {"ann", "anna"},    {"joe", "josef"},
    {"kim", "kimi"},     {"today", "heute"}, {"often", "oft"},   {"gladly", "gern"}};

// Every "S V O [adverb]" sentence and its "S' [adverb'] O' V'" translation.
std::vector<Example> svo_to_sov() {
  std::vector<Example> out;
  for (const char* s : {"alice", "bob", "carol"})
    for (const char* v : {"sees", "likes", "helps", "calls"})
      for (const char* o : {"tom", "ann", "joe", "kim"})
        for (const char* adverb : {"", "today", "often", "gladly"}) {
          Example e;
          e.tokens = {s, v, o};
          e.tokens_b = {kLexicon.at(s)};
          if (*adverb) {
            e.tokens.push_back(adverb);
            e.tokens_b.push_back(kLexicon.at(adverb));
          }
          e.tokens_b.push_back(kLexicon.at(o));
          e.tokens_b.push_back(kLexicon.at(v));
          out.push_back(e);
        }
  return out;
}

Seq2SeqOptions small_model(const Vocabulary& vocab) {
  Seq2SeqOptions o;
  o.vocab_size = vocab.size();
  o.pad_id = Vocabulary::kPad;
  o.eos_id = end_of_sentence_id(vocab);
  o.hidden = 16;
  o.heads = 2;
  o.encoder_layers = o.decoder_layers = 1;
  o.filter = 32;
  o.prepostprocess_keep = o.attention_keep = o.relu_keep = 1.0;
  return o;
}

TEST(Seq2SeqTraining, LearnsSvoToSovAndTranslatesUnseenSentences) {
  std::vector<Example> all = svo_to_sov();
  ASSERT_EQ(all.size(), 192u);
  Generator g(7);
  for (size_t i = all.size(); i > 1; --i) std::swap(all[i - 1], all[static_cast<size_t>(g.uniform() * i)]);
  const std::vector<Example> train(all.begin(), all.begin() + 150), test(all.begin() + 150, all.end());
  const Vocabulary vocab = translation_vocabulary(all, 1);
  EXPECT_EQ(vocab.size(), 3 + 28);
  Generator init(8), noise(9);
  Seq2SeqTransformer model(small_model(vocab), init, noise);
  TranslationTraining t;
  t.steps = 300;
  t.batch_size = 32;
  t.adam.beta2 = 0.98;
  t.adam.eps = 1e-9;
  t.schedule.kind = LrScheduleKind::RsqrtWarmup;
  t.schedule.learning_rate = 0.1;
  t.schedule.warmup_steps = 40;
  t.schedule.hidden = 16;
  const std::vector<double> losses = train_translation(model, train, vocab, t);
  ASSERT_EQ(losses.size(), 300u);
  EXPECT_LT(losses.back(), 0.25 * losses.front());
  BeamSearchOptions beam;  // t2t's beam 4, alpha 0.6
  const TranslationScores s = evaluate_translation(model, test, vocab, beam);
  EXPECT_EQ(s.sentences, 42);
  EXPECT_GE(s.token_accuracy, 0.95);
  EXPECT_GE(s.exact_match, 0.85);  // both 1.00 when written
  const std::vector<std::string> lines =
      translate_lines(model, {"alice sees tom", "", "bob calls kim often"}, vocab, beam);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1], "");
  EXPECT_EQ(lines[0], "alicia thomas sieht");
}

TEST(Seq2SeqTraining, BatchesEndTargetsInEosAndPad) {
  std::vector<Example> ex(2);
  ex[0].tokens = {"a", "b"};
  ex[0].tokens_b = {"x"};
  ex[1].tokens = {"c"};
  ex[1].tokens_b = {"y", "z"};
  const Vocabulary vocab = translation_vocabulary(ex, 1);
  const TranslationBatch b = translation_batch(ex, 0, 2, vocab);
  EXPECT_EQ(b.source.shape(), Shape({2, 2}));
  EXPECT_EQ(b.target.shape(), Shape({2, 3}));
  EXPECT_EQ(b.target.at({0, 1}), 2.0);  // </s>
  EXPECT_EQ(b.target.at({0, 2}), 0.0);  // <pad>
  EXPECT_EQ(b.source.at({1, 1}), 0.0);
  EXPECT_EQ(b.target.at({1, 2}), 2.0);
  ex[1].tokens_b.clear();
  EXPECT_THAT(error_of([&] { translation_batch(ex, 0, 2, vocab); }), ::testing::HasSubstr("example 1 has an empty target"));
  EXPECT_THAT(error_of([&] { end_of_sentence_id(Vocabulary::from_words({"w"})); }), ::testing::HasSubstr("</s>"));
}

}  // namespace
}  // namespace attn
