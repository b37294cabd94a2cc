#include "attn/train/pictures/explain.h"

#include <algorithm>

#include "attn/engine/autograd.h"
#include "attn/engine/error.h"
#include "attn/models/resan.h"
#include "attn/ops/softmax/softmax.h"
#include "attn/train/data/batching.h"
#include "attn/train/data/tokenizer.h"
#include "attn/train/evaluate.h"

namespace attn {

namespace {
std::vector<int> selection_of(const Tensor& z) {
  std::vector<int> out;
  for (double v : z.to(Device::CPU).to_vector()) out.push_back(v != 0);
  return out;
}
}  // namespace

Explanation explain_sentence(SavedRun& run, const std::string& sentence, int64_t max_tokens) {
  ATTN_CHECK(run.task == TaskKind::Classify, "explain", "the run in '", run.dir, "' is a ", task_name(run.task),
             " run; explain pictures single-sentence classifiers (task = classify)");
  ATTN_CHECK(max_tokens >= 1, "explain", "max_tokens must be at least 1, got ", max_tokens);
  Explanation e;
  e.encoder = encoder_name(run.model_config);
  e.labels = run.labels;
  Example example;
  example.tokens = tokenize(sentence);
  ATTN_CHECK(!example.tokens.empty(), "explain", "the sentence '", sentence, "' has no tokens");
  e.original_length = static_cast<int64_t>(example.tokens.size());
  const int64_t keep = run.max_len > 0 ? std::min(max_tokens, run.max_len) : max_tokens;
  if (e.original_length > keep) example.tokens.resize(static_cast<size_t>(keep));
  e.tokens = example.tokens;
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
  if (const auto* resan = dynamic_cast<const Resan*>(&run.model->encoder())) {
    e.heads = selection_of(resan->last_selection().z_head);
    e.dependents = selection_of(resan->last_selection().z_dep);
  }
  return e;
}

}  // namespace attn
