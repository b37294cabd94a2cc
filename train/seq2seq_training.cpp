#include "attn/train/seq2seq_training.h"

#include <algorithm>
#include <numeric>

#include "attn/engine/autograd.h"
#include "attn/engine/copy.h"
#include "attn/engine/error.h"
#include "attn/engine/random.h"
#include "attn/ops/loss/loss_label_smoothing.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/util/text.h"

namespace attn {

namespace {

// Batches of `batch` sentences at a time, `max_length` 0 meaning source length + 50.
std::vector<WordIds> decode_all(const Seq2SeqTransformer& model, const std::vector<std::vector<int64_t>>& sources,
                                BeamSearchOptions options) {
  constexpr size_t kBatch = 32;
  std::vector<WordIds> out;
  for (size_t begin = 0; begin < sources.size(); begin += kBatch) {
    const size_t end = std::min(sources.size(), begin + kBatch);
    size_t longest = 0;
    for (size_t i = begin; i < end; ++i) longest = std::max(longest, sources[i].size());
    std::vector<int64_t> ids;
    for (size_t i = begin; i < end; ++i) {
      std::vector<int64_t> row = sources[i];
      row.resize(longest, model.options().pad_id);
      ids.insert(ids.end(), row.begin(), row.end());
    }
    const Tensor source = from_indices(ids, {static_cast<int64_t>(end - begin), static_cast<int64_t>(longest)});
    BeamSearchOptions o = options;
    if (o.max_length == 0) o.max_length = default_max_decode_length(source);
    for (WordIds& w : beam_search(model, source, o)) out.push_back(std::move(w));
  }
  return out;
}

}  // namespace

Vocabulary translation_vocabulary(const std::vector<Example>& examples, int64_t min_count, int64_t max_size) {
  ATTN_CHECK(max_size == 0 || max_size >= 3, "translation_vocabulary",
             "max_size must be 0 (no cap) or at least 3 (<pad>, <unk>, </s>), got ", max_size);
  const Vocabulary counted = Vocabulary::build(examples, min_count, max_size == 0 ? 0 : max_size - 1);
  std::vector<std::string> words{kEndOfSentenceWord};
  for (size_t i = 2; i < counted.words().size(); ++i)
    if (counted.words()[i] != kEndOfSentenceWord) words.push_back(counted.words()[i]);
  return Vocabulary::from_words(words);
}

int64_t end_of_sentence_id(const Vocabulary& vocab) {
  ATTN_CHECK(vocab.size() > 2 && vocab.word(2) == kEndOfSentenceWord, "translation", "the vocabulary has no ",
             kEndOfSentenceWord, " at id 2: it was not built by translation_vocabulary");
  return 2;
}

TranslationBatch translation_batch(const std::vector<Example>& examples, size_t begin, size_t end,
                                   const Vocabulary& vocab) {
  ATTN_CHECK(begin < end && end <= examples.size(), "translation_batch", "examples [", begin, ", ", end,
             ") are not a non-empty range of ", examples.size());
  const int64_t eos = end_of_sentence_id(vocab);
  size_t source_len = 0, target_len = 0;
  for (size_t i = begin; i < end; ++i) {
    ATTN_CHECK(!examples[i].tokens.empty() && !examples[i].tokens_b.empty(), "translation_batch", "example ", i,
               " has an empty ", examples[i].tokens.empty() ? "source" : "target", " sentence");
    source_len = std::max(source_len, examples[i].tokens.size());
    target_len = std::max(target_len, examples[i].tokens_b.size() + 1);
  }
  std::vector<int64_t> source, target;
  for (size_t i = begin; i < end; ++i) {
    std::vector<int64_t> s = vocab.ids(examples[i].tokens), t = vocab.ids(examples[i].tokens_b);
    t.push_back(eos);
    s.resize(source_len, Vocabulary::kPad);
    t.resize(target_len, Vocabulary::kPad);
    source.insert(source.end(), s.begin(), s.end());
    target.insert(target.end(), t.begin(), t.end());
  }
  const int64_t B = static_cast<int64_t>(end - begin);
  return {from_indices(source, {B, static_cast<int64_t>(source_len)}),
          from_indices(target, {B, static_cast<int64_t>(target_len)})};
}

std::vector<double> train_translation(Seq2SeqTransformer& model, const std::vector<Example>& train,
                                      const Vocabulary& vocab, const TranslationTraining& options) {
  const char* op = "train_translation";
  ATTN_CHECK(!train.empty(), op, "no training examples");
  ATTN_CHECK(options.steps > 0 && options.batch_size > 0, op, "steps and batch_size must be positive, got ",
             options.steps, " and ", options.batch_size);
  ATTN_CHECK(model.options().vocab_size == vocab.size() && model.options().eos_id == end_of_sentence_id(vocab), op,
             "the model's vocabulary (", model.options().vocab_size, " words, eos ", model.options().eos_id,
             ") is not this one (", vocab.size(), " words)");
  model.set_training(true);
  Adam adam(model.parameters(), options.adam);
  Generator order_gen(options.seed);
  std::vector<Example> order = train;
  size_t next = order.size();  // shuffle at the start of every pass
  std::vector<double> losses;
  const size_t batch = std::min(order.size(), static_cast<size_t>(options.batch_size));
  for (int64_t s = 0; s < options.steps; ++s) {
    if (next + batch > order.size()) {
      for (size_t i = order.size(); i > 1; --i)
        std::swap(order[i - 1], order[static_cast<size_t>(order_gen.uniform() * static_cast<double>(i))]);
      next = 0;
    }
    const TranslationBatch b = translation_batch(order, next, next + batch, vocab);
    next += batch;
    adam.set_lr(options.schedule.at(s));
    adam.zero_grad();
    const Tensor loss =
        label_smoothed_cross_entropy(model.forward(b.source, b.target), b.target, options.label_smoothing,
                                     Vocabulary::kPad);
    loss.backward();
    adam.step();
    losses.push_back(loss.item());
  }
  model.set_training(false);
  return losses;
}

TranslationScores evaluate_translation(Seq2SeqTransformer& model, const std::vector<Example>& examples,
                                       const Vocabulary& vocab, BeamSearchOptions options) {
  ATTN_CHECK(!examples.empty(), "evaluate_translation", "no examples to evaluate");
  model.set_training(false);
  NoGrad no_grad;
  TranslationScores scores;
  scores.sentences = static_cast<int64_t>(examples.size());
  int64_t right = 0, words = 0;
  std::vector<std::vector<int64_t>> sources;
  for (size_t begin = 0; begin < examples.size(); begin += 32) {
    const size_t end = std::min(examples.size(), begin + 32);
    const TranslationBatch b = translation_batch(examples, begin, end, vocab);
    const Tensor predicted = argmax(model.forward(b.source, b.target), -1);
    const std::vector<double> p = predicted.to_vector(), t = b.target.to_vector();
    for (size_t i = 0; i < t.size(); ++i) {
      if (t[i] == Vocabulary::kPad) continue;
      ++words;
      right += p[i] == t[i];
    }
  }
  for (const Example& e : examples) sources.push_back(vocab.ids(e.tokens));
  const std::vector<WordIds> decoded = decode_all(model, sources, options);
  int64_t exact = 0;
  for (size_t i = 0; i < examples.size(); ++i) exact += decoded[i] == vocab.ids(examples[i].tokens_b);
  scores.exact_match = static_cast<double>(exact) / static_cast<double>(examples.size());
  scores.token_accuracy = static_cast<double>(right) / static_cast<double>(words);
  return scores;
}

std::vector<std::string> translate_lines(Seq2SeqTransformer& model, const std::vector<std::string>& lines,
                                         const Vocabulary& vocab, BeamSearchOptions options) {
  model.set_training(false);
  std::vector<std::vector<int64_t>> sources;
  std::vector<size_t> where;  // the line of each non-empty source
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::vector<std::string> words = text::split_whitespace(lines[i]);
    if (words.empty()) continue;
    sources.push_back(vocab.ids(words));
    where.push_back(i);
  }
  std::vector<std::string> out(lines.size());
  const std::vector<WordIds> decoded = decode_all(model, sources, options);
  for (size_t k = 0; k < decoded.size(); ++k) {
    std::string text;
    for (int64_t id : decoded[k]) text += (text.empty() ? "" : " ") + vocab.word(id);
    out[where[k]] = text;
  }
  return out;
}

}  // namespace attn
