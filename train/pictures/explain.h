// What a trained classifier attends to for one sentence (`attn explain`):
// the tokens, the prediction with its probability, and the attention weights
// the encoder recorded (models/attention_trace.h) in the very forward pass
// that made the prediction (evaluation mode: no dropout, deterministic
// selections).
#pragma once
#include <string>
#include <vector>

#include "attn/models/attention_trace.h"
#include "attn/train/run/saved_run.h"

namespace attn {

struct Explanation {
  std::string encoder;                 // the model config's encoder name
  std::vector<std::string> tokens;     // as the model saw them (after truncation)
  int64_t original_length = 0;         // tokens before truncation
  std::vector<std::string> labels;     // class names (tag runs: tag names)
  std::vector<double> probabilities;   // softmax of the logits, one per class (sentence tasks)
  int64_t predicted = 0;               // argmax (sentence tasks)
  // Token tasks: the predicted tag's name for each token, as the run's task
  // decodes it (train/evaluate.h predict()); empty for sentence tasks.
  std::vector<std::string> tags;
  int64_t predicate = -1;              // srl: the predicate's position (-1: none)
  AttentionTrace trace;
  // ReSAN only: the hard attention's selections (1 = selected), one per token.
  std::vector<int> heads, dependents;
  bool truncated() const { return original_length > static_cast<int64_t>(tokens.size()); }
};

// Runs the run's model on one sentence (a classify run). At most max_tokens
// tokens are kept (and never more than the run's max_len). Throws on an
// empty sentence or a run of another task.
Explanation explain_sentence(SavedRun& run, const std::string& sentence, int64_t max_tokens);

// The same for a tag run: the sentence split at whitespace and lowercased as
// the tagging loaders read it, the predicted tag of every token (decoded by
// predict(), train/evaluate.h, as `attn eval` scores them, so a task's own
// decoder shows up here too), and the attention of that forward pass. Throws on an empty sentence or a run of another task.
Explanation explain_tagged_sentence(SavedRun& run, const std::string& sentence, int64_t max_tokens);

}  // namespace attn
