// The in-memory form every dataset loader produces and the batching and
// training code consume: tokenised examples in train/dev/test splits.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "attn/util/task_kind.h"  // TaskKind

namespace attn {

struct Example {
  std::vector<std::string> tokens;    // sentence (or premise)
  std::vector<std::string> tokens_b;  // hypothesis (pair/relatedness tasks)
  int64_t label = -1;                 // class index (classify/pair)
  double score = 0;                   // relatedness in [1, 5]
  std::vector<int64_t> tags;          // per-token tag ids (tagging)
  // `tokens` as the file spelled them (case kept), for the character
  // feature; empty where a loader keeps none (tokens are used instead).
  std::vector<std::string> cased_tokens;
  int64_t predicate = -1;             // srl: the position of the predicate in tokens
  std::vector<std::vector<std::string>> passage;  // locate: the passage's sentences; label = the answer's
};

// A labelled split that the final evaluation of `attn train` (an object of
// its own in test_metrics.json) and `attn eval --split NAME` report beside
// test, for corpora with more than one evaluation set (MultiNLI's matched
// and mismatched). Never trained on; docs/data.md says, per format, whether
// it is also the dev split that picks the best checkpoint.
struct NamedSplit {
  std::string name;
  std::vector<Example> examples;
};

struct Dataset {
  std::string name;
  TaskKind task = TaskKind::Classify;
  std::vector<std::string> label_names;  // class or tag names, index = id
  std::vector<Example> train, dev, test;
  std::vector<NamedSplit> reported;  // extra evaluation splits, in report order
  std::string notes;  // what the loader decided about the data, said after the summary (may be empty)
};

// train, dev, test or one of data.reported by name; null when none is named so.
const std::vector<Example>* find_split(const Dataset& data, const std::string& name);
// "train, dev, test" and the reported splits' names, for error messages.
std::string split_names(const Dataset& data);

// Moves a seeded random `fraction` of `train` (at least one example when
// train has two or more) into a new vector and returns it; the rest stay in
// train in their original order. Used where a corpus ships without a dev set.
std::vector<Example> split_off(std::vector<Example>& train, double fraction, uint64_t seed);
// Which of n items split_off's rule holds out (the same seeded choice), for
// a loader that splits groups of examples (SQuAD's paragraphs) instead.
std::vector<bool> held_out(size_t n, double fraction, uint64_t seed);

// One line per split: "name: task, C labels, train N, dev N, test N[, NAME N][; notes]".
std::string dataset_summary(const Dataset& data);

}  // namespace attn
