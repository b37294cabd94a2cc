// Training and using the translation model (models/seq2seq_transformer.h)
// on an in-memory parallel Dataset: Example.tokens is the source sentence,
// Example.tokens_b its translation. One vocabulary serves both sides (t2t's
// shared vocabulary): <pad> 0, <unk> 1, </s> 2 (end of sentence), then the
// words. The loop is t2t's: label-smoothed cross-entropy, Adam, the rate of
// an LrSchedule set before every step.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "attn/models/seq2seq_search.h"
#include "attn/train/data/dataset.h"
#include "attn/train/data/vocab.h"
#include "attn/train/optim/adam.h"
#include "attn/train/optim/lr_schedule.h"

namespace attn {

constexpr const char* kEndOfSentenceWord = "</s>";

// The words of both sides of `examples` seen at least min_count times
// (max_size caps the whole vocabulary; 0 = no cap), </s> at id 2.
Vocabulary translation_vocabulary(const std::vector<Example>& examples, int64_t min_count, int64_t max_size = 0);
// The id of </s>; throws when the vocabulary has none at id 2.
int64_t end_of_sentence_id(const Vocabulary& vocab);

// Examples [begin, end) as int64 ids: source [B, longest source] and target
// [B, longest target + 1], each target ending in </s>, pad_id after.
// Throws naming the example when a source or target is empty.
struct TranslationBatch {
  Tensor source, target;
};
TranslationBatch translation_batch(const std::vector<Example>& examples, size_t begin, size_t end,
                                   const Vocabulary& vocab);

struct TranslationTraining {
  int64_t steps = 0;       // > 0
  int64_t batch_size = 0;  // sentences per step, > 0
  double label_smoothing = 0.1;  // t2t transformer_base label_smoothing
  LrSchedule schedule;
  AdamOptions adam;  // its lr is replaced by the schedule's
  uint64_t seed = 1;  // the order of the examples
};

// Trains `model` (set to training mode) for options.steps steps over
// shuffled passes of `train`; returns the loss of every step.
std::vector<double> train_translation(Seq2SeqTransformer& model, const std::vector<Example>& train,
                                      const Vocabulary& vocab, const TranslationTraining& options);

struct TranslationScores {
  double exact_match = 0;     // decoded sentences equal to the reference
  double token_accuracy = 0;  // teacher-forced argmax equal to the target word, over target words and </s>
  int64_t sentences = 0;
};
// Evaluation mode; decodes with beam search (beam_size 1: greedy) at
// options.max_length, or source length + 50 when it is 0.
TranslationScores evaluate_translation(Seq2SeqTransformer& model, const std::vector<Example>& examples,
                                       const Vocabulary& vocab, BeamSearchOptions options);

// Translates whitespace-tokenised lines; an empty line gives an empty line.
std::vector<std::string> translate_lines(Seq2SeqTransformer& model, const std::vector<std::string>& lines,
                                         const Vocabulary& vocab, BeamSearchOptions options);

}  // namespace attn
