#include "attn/train/pictures/explain.h"

#include <algorithm>

#include "attn/engine/autograd.h"
#include "attn/engine/error.h"
#include "attn/models/resan.h"
#include "attn/ops/softmax/softmax.h"
#include "attn/train/data/batching.h"
#include "attn/train/data/srl_input.h"
#include "attn/train/data/tokenizer.h"
#include "attn/train/evaluate.h"
#include "attn/util/text.h"

namespace attn {

namespace {
std::vector<int> selection_of(const Tensor& z) {
  std::vector<int> out;
  for (double v : z.to(Device::CPU).to_vector()) out.push_back(v != 0);
  return out;
}

// The sentence's tokens cut to what the model reads; the common start of an explanation.
Explanation start_explanation(const SavedRun& run, std::vector<std::string> tokens, const std::string& sentence,
                              int64_t max_tokens) {
  ATTN_CHECK(max_tokens >= 1, "explain", "max_tokens must be at least 1, got ", max_tokens);
  ATTN_CHECK(!tokens.empty(), "explain", "the sentence '", sentence, "' has no tokens");
  Explanation e;
  e.encoder = encoder_name(run.model_config);
  e.labels = run.labels;
  e.original_length = static_cast<int64_t>(tokens.size());
  const int64_t keep = run.max_len > 0 ? std::min(max_tokens, run.max_len) : max_tokens;
  if (e.original_length > keep) tokens.resize(static_cast<size_t>(keep));
  e.tokens = std::move(tokens);
  return e;
}

void record_resan_selection(const SavedRun& run, Explanation& e) {
  if (const auto* resan = dynamic_cast<const Resan*>(&run.model->encoder())) {
    e.heads = selection_of(resan->last_selection().z_head);
    e.dependents = selection_of(resan->last_selection().z_dep);
  }
}
}  // namespace

Explanation explain_sentence(SavedRun& run, const std::string& sentence, int64_t max_tokens) {
  ATTN_CHECK(run.task == TaskKind::Classify, "explain", "the run in '", run.dir, "' is a ", task_name(run.task),
             " run; explain pictures single-sentence classifiers (task = classify)");
  Explanation e = start_explanation(run, tokenize(sentence), sentence, max_tokens);
  Example example;
  example.tokens = e.tokens;
  example.label = 0;

  BatchOptions bo;
  bo.batch_size = 1;
  bo.shuffle = false;
  BatchIterator it({example}, run.vocab, run.task, bo, nullptr);
  Batch batch;
  ATTN_CHECK(it.next(batch), "explain", "no batch for the sentence");
  const std::vector<Tensor> params = run.model->parameters();
  move_batch(batch, params.empty() ? Device::CPU : params.front().device());

  NoGrad no_grad;
  run.model->set_training(false);
  Tensor logits;
  {
    AttachAttentionTrace attach(e.trace);
    logits = run.model->logits(inputs_of(batch));
  }
  e.probabilities = softmax(logits, -1).to(Device::CPU).to_vector();
  e.predicted = static_cast<int64_t>(std::max_element(e.probabilities.begin(), e.probabilities.end()) -
                                     e.probabilities.begin());
  record_resan_selection(run, e);
  return e;
}

Explanation explain_tagged_sentence(SavedRun& run, const std::string& sentence, int64_t max_tokens) {
  ATTN_CHECK(tags_tokens(run.task), "explain", "the run in '", run.dir, "' is a ", task_name(run.task),
             " run; explain_tagged_sentence pictures taggers (task = tag or srl)");
  // An srl line names its predicate ("words<TAB>K"), as attn predict reads it.
  const Example input = run.task == TaskKind::Srl ? srl_input(sentence, "the sentence") : Example();
  const std::vector<std::string> cased = text::split_whitespace(run.task == TaskKind::Srl ? sentence.substr(0, sentence.rfind('\t')) : sentence);
  std::vector<std::string> tokens;
  for (const std::string& t : cased) tokens.push_back(lowercase_token(t));
  Explanation e = start_explanation(run, std::move(tokens), sentence, max_tokens);
  Example example;
  example.tokens = e.tokens;
  example.tags.assign(e.tokens.size(), 0);
  if (run.task == TaskKind::Srl) {
    ATTN_CHECK(input.predicate < static_cast<int64_t>(e.tokens.size()), "explain", "the predicate, word ",
               input.predicate + 1, ", lies beyond the first ", e.tokens.size(), " tokens drawn (--max-tokens)");
    example.predicate = input.predicate;
    e.predicate = input.predicate;
  }
  EvalOptions options;
  options.batch_size = 1;
  options.max_len = run.max_len;
  std::vector<Prediction> predicted;
  {
    AttachAttentionTrace attach(e.trace);
    predicted = predict(*run.model, {example}, run.vocab, options);
  }
  const std::vector<int64_t>& ids = predicted.at(0).tags;
  ATTN_CHECK(ids.size() == e.tokens.size(), "explain", "the model tagged ", ids.size(), " of the sentence's ",
             e.tokens.size(), " tokens");
  for (int64_t id : ids) e.tags.push_back(run.labels.at(static_cast<size_t>(id)));
  record_resan_selection(run, e);
  return e;
}

}  // namespace attn
