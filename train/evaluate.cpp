#include "attn/train/evaluate.h"

#include <cmath>
#include <cstdio>

#include "attn/engine/autograd.h"
#include "attn/engine/error.h"
#include "attn/models/heads.h"
#include "attn/ops/binary/binary.h"
#include "attn/engine/copy.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/ops/softmax/softmax.h"
#include "attn/ops/view/view.h"
#include "attn/train/batch_noise.h"
#include "attn/train/metrics.h"
#include "attn/train/srl_metrics.h"

namespace attn {

TaskInputs inputs_of(const Batch& batch) {
  TaskInputs in;
  in.ids = batch.ids;
  in.mask = batch.mask;
  in.ids_b = batch.ids_b;
  in.mask_b = batch.mask_b;
  in.chars = batch.chars;
  in.chars_b = batch.chars_b;
  in.predicate = batch.predicate;
  in.passage_ids = batch.passage_ids;
  in.passage_mask = batch.passage_mask;
  in.sentences = batch.sentences;
  return in;
}

void move_batch(Batch& batch, Device device) {
  for (Tensor* t : {&batch.ids, &batch.mask, &batch.ids_b, &batch.mask_b, &batch.labels, &batch.tags, &batch.chars,
                    &batch.chars_b, &batch.predicate, &batch.passage_ids, &batch.passage_mask, &batch.sentences})
    if (t->defined()) *t = t->to(device);
}

Tensor task_loss(TaskKind task, const Tensor& logits, const Batch& batch, Reduction reduction, const Crf* crf) {
  if (crf) {
    ATTN_CHECK(task == TaskKind::Tag, "task_loss", "a CRF scores tag paths: the ", task_name(task),
               " task has none");
    Tensor per_sentence = crf->nll(logits, batch.tags, batch.mask);
    switch (reduction) {
      case Reduction::None: return per_sentence;
      case Reduction::Sum: return sum(per_sentence);
      case Reduction::Mean: return mean(per_sentence);
    }
  }
  switch (task) {
    case TaskKind::Translate:
      ATTN_CHECK(false, "evaluate", "the translate task has its own model and loop (train/translation_run.h)");
      break;
    case TaskKind::Classify:
    case TaskKind::Pair:
    case TaskKind::Locate: {  // locate: the padding sentences' -inf scores get probability 0
      CrossEntropyOptions o;
      o.reduction = reduction;
      return cross_entropy(logits, batch.labels, o);
    }
    case TaskKind::Relatedness: {
      Tensor target = relatedness_target(batch.scores, logits.size(1), logits.dtype()).to(logits.device());
      Tensor log_p = log_softmax(logits, -1);
      if (reduction == Reduction::None) return sum(kl_div(log_p, target, Reduction::None), {1});
      return kl_div(log_p, target, reduction);
    }
    case TaskKind::Tag:
    case TaskKind::Srl: {
      CrossEntropyOptions o;
      o.ignore_index = kIgnoreTag;
      o.reduction = reduction;
      if (reduction != Reduction::None) return cross_entropy(logits, batch.tags, o);
      // Per sentence: the mean over its valid tokens.
      Tensor per_token = cross_entropy(logits, batch.tags, o);  // [B, n], 0 at padding
      Tensor lengths = sum(cast(batch.mask, logits.dtype()), {1});
      return sum(per_token, {1}) / lengths;
    }
  }
  return Tensor();
}

Tensor training_loss(TaskKind task, const Tensor& logits, const Batch& batch, const Crf* crf) {
  // A batch made by hand (global_examples 0) is its own whole batch.
  const bool whole = batch.global_examples == 0;
  if (tags_tokens(task) && !crf) {
    if (whole) return task_loss(task, logits, batch, Reduction::Mean);
    return task_loss(task, logits, batch, Reduction::Sum) / static_cast<double>(batch.global_tokens);
  }
  Tensor losses = task_loss(task, logits, batch, Reduction::None, crf);
  if (whole) return mean(losses);
  return sum(losses) / static_cast<double>(batch.global_examples);
}

namespace {

// A tag set with any B-, I-, E- or S- tag is scored by chunk (entity) F1.
bool is_chunk_tagged(const std::vector<std::string>& labels) {
  for (const std::string& l : labels)
    if (is_chunk_tag(l)) return true;
  return false;
}

// Runs the model over examples in a fixed order, calling visit(batch, logits).
// Returns the number of batches (this process ran its share of them).
template <class Visit>
int64_t run_batches(TaskModel& model, const std::vector<Example>& examples, const Vocabulary& vocab,
                 const EvalOptions& options, const Visit& visit) {
  NoGrad no_grad;
  bool was_training = model.training();
  model.set_training(false);
  BatchOptions bo;
  bo.batch_size = options.batch_size;
  bo.max_len = options.max_len;
  bo.shuffle = false;
  bo.bucket_by_length = true;
  BatchIterator it(examples, vocab, model.task(), bo, nullptr);
  Batch batch;
  const std::vector<Tensor> params = model.parameters();
  const Device device = params.empty() ? Device::CPU : params.front().device();
  const int rank = options.processes ? options.processes->rank() : 0;
  const int processes = options.processes ? options.processes->size() : 1;
  try {
    for (int64_t index = 0; it.next(batch); ++index) {
      if (index % processes != rank) continue;
      move_batch(batch, device);
      const BatchNoise noise(options.noise, options.noise_seed, index, batch);
      visit(index, batch, model.logits(inputs_of(batch)));
    }
  } catch (...) {
    model.set_training(was_training);
    throw;
  }
  model.set_training(was_training);
  return it.batches_per_epoch();
}

// The valid positions of an example in its batch: its length, truncated to
// max_len, and one for an empty sentence (batching.h).
size_t tagged_positions(const Example& e, int64_t max_len) {
  const size_t length = max_len > 0 ? std::min(e.tokens.size(), static_cast<size_t>(max_len)) : e.tokens.size();
  return std::max<size_t>(length, 1);
}

// Every process ran some of the batches (`mine`: the examples this one
// predicted): after this, every process has every example's prediction and
// every batch's loss. A slot was written by one process and is zero on the
// others, so the sums are exact.
void share_predictions(Communicator& processes, TaskKind task, const std::vector<Example>& examples,
                       int64_t max_len, const std::vector<bool>& mine, std::vector<Prediction>& out,
                       std::vector<double>& batch_losses) {
  std::vector<double> values(batch_losses);
  const size_t losses = values.size();
  for (size_t i = 0; i < examples.size(); ++i) {
    const Prediction& p = out[i];
    switch (task) {
      case TaskKind::Translate:
        ATTN_CHECK(false, "evaluate", "the translate task has its own model and loop (train/translation_run.h)");
        break;
      case TaskKind::Classify:
      case TaskKind::Pair:
      case TaskKind::Locate: values.push_back(mine[i] ? static_cast<double>(p.label) : 0.0); break;
      case TaskKind::Relatedness: values.push_back(mine[i] ? p.score : 0.0); break;
      case TaskKind::Tag:
      case TaskKind::Srl: {
        const size_t n = tagged_positions(examples[i], max_len);
        ATTN_CHECK(!mine[i] || p.tags.size() == n, "evaluate", "example ", i, " has ", p.tags.size(),
                   " predicted tags where its batch had ", n, " valid positions");
        for (size_t t = 0; t < n; ++t) values.push_back(mine[i] ? static_cast<double>(p.tags[t]) : 0.0);
        break;
      }
    }
  }
  processes.sum_in_rank_order(values, "evaluation");
  batch_losses.assign(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(losses));
  size_t at = losses;
  for (size_t i = 0; i < examples.size(); ++i) {
    Prediction& p = out[i];
    switch (task) {
      case TaskKind::Translate:
        ATTN_CHECK(false, "evaluate", "the translate task has its own model and loop (train/translation_run.h)");
        break;
      case TaskKind::Classify:
      case TaskKind::Pair:
      case TaskKind::Locate: p.label = static_cast<int64_t>(values[at++]); break;
      case TaskKind::Relatedness: p.score = values[at++]; break;
      case TaskKind::Tag:
      case TaskKind::Srl: {
        const size_t n = tagged_positions(examples[i], max_len);
        p.tags.clear();
        for (size_t t = 0; t < n; ++t) p.tags.push_back(static_cast<int64_t>(values[at++]));
        break;
      }
    }
  }
}

// One pass: predictions for every example and, when asked, the mean loss.
std::vector<Prediction> predict_with_loss(TaskModel& model, const std::vector<Example>& examples,
                                          const Vocabulary& vocab, const EvalOptions& options, double* mean_loss) {
  std::vector<Prediction> out(examples.size());
  std::vector<double> batch_losses;  // each batch's loss times its size, in batch order
  std::vector<bool> mine(examples.size(), false);
  const int64_t batches = run_batches(model, examples, vocab, options, [&](int64_t index, const Batch& batch,
                                                                         const Tensor& logits) {
    for (size_t i : batch.indices) mine[i] = true;
    if (mean_loss) {
      batch_losses.resize(static_cast<size_t>(index) + 1, 0.0);
      batch_losses[static_cast<size_t>(index)] =
          task_loss(model.task(), logits, batch, Reduction::Mean, model.crf()).item() * static_cast<double>(batch.size());
    }
    switch (model.task()) {
      case TaskKind::Translate:
        ATTN_CHECK(false, "evaluate", "the translate task has its own model and loop (train/translation_run.h)");
        break;
      case TaskKind::Classify:
      case TaskKind::Pair:
      case TaskKind::Locate: {
        // Results come to the host once per batch: at() on a CUDA tensor
        // would copy the whole tensor for every element read.
        Tensor best = argmax(logits, -1).to(Device::CPU);
        for (int64_t i = 0; i < batch.size(); ++i) out[batch.indices[i]].label = static_cast<int64_t>(best.at({i}));
        if (options.probabilities) {
          const Tensor p = softmax(logits, -1).to(Device::CPU);
          const std::vector<double> values = p.to_vector();
          const int64_t classes = p.size(1);
          for (int64_t i = 0; i < batch.size(); ++i)
            out[batch.indices[i]].probabilities.assign(values.begin() + i * classes, values.begin() + (i + 1) * classes);
        }
        break;
      }
      case TaskKind::Relatedness: {
        Tensor score = relatedness_prediction(logits).to(Device::CPU);
        for (int64_t i = 0; i < batch.size(); ++i) out[batch.indices[i]].score = score.at({i});
        break;
      }
      case TaskKind::Tag:
      case TaskKind::Srl: {
        // With a CRF, the best path as a whole (Viterbi), not each token's best tag.
        Tensor best = (model.crf() ? model.crf()->decode(logits, batch.mask) : argmax(logits, -1)).to(Device::CPU);
        Tensor mask = batch.mask.to(Device::CPU);
        for (int64_t i = 0; i < batch.size(); ++i) {
          std::vector<int64_t>& tags = out[batch.indices[i]].tags;
          for (int64_t t = 0; t < batch.ids.size(1); ++t)
            if (mask.at({i, t}) != 0) tags.push_back(static_cast<int64_t>(best.at({i, t})));
        }
        break;
      }
    }
  });
  if (mean_loss) batch_losses.resize(static_cast<size_t>(batches), 0.0);
  if (options.processes && options.processes->size() > 1)
    share_predictions(*options.processes, model.task(), examples, options.max_len, mine, out, batch_losses);
  if (mean_loss) {
    double loss_sum = 0;
    for (double loss : batch_losses) loss_sum += loss;
    *mean_loss = examples.empty() ? 0.0 : loss_sum / static_cast<double>(examples.size());
  }
  return out;
}

}  // namespace

std::vector<Prediction> predict(TaskModel& model, const std::vector<Example>& examples, const Vocabulary& vocab,
                                const EvalOptions& options) {
  return predict_with_loss(model, examples, vocab, options, nullptr);
}

EvalResult evaluate(TaskModel& model, const std::vector<Example>& examples, const Vocabulary& vocab,
                    const std::vector<std::string>& label_names, const EvalOptions& options) {
  ATTN_CHECK(!examples.empty(), "evaluate", "no examples to evaluate");
  EvalResult r;
  double loss = 0;
  std::vector<Prediction> pred = predict_with_loss(model, examples, vocab, options, &loss);
  r.metrics["loss"] = loss;
  switch (model.task()) {
    case TaskKind::Translate:
      ATTN_CHECK(false, "evaluate", "the translate task has its own model and loop (train/translation_run.h)");
      break;
    case TaskKind::Classify:
    case TaskKind::Pair: {
      std::vector<int64_t> p, g;
      for (size_t i = 0; i < examples.size(); ++i) {
        p.push_back(pred[i].label);
        g.push_back(examples[i].label);
      }
      r.metrics["accuracy"] = accuracy(p, g);
      r.metrics["macro_f1"] = macro_f1(p, g);
      r.primary = "accuracy";
      break;
    }
    case TaskKind::Locate: {
      std::vector<int64_t> p, g;
      for (size_t i = 0; i < examples.size(); ++i) {
        p.push_back(pred[i].label);
        g.push_back(examples[i].label);
      }
      r.metrics["accuracy"] = accuracy(p, g);  // sentence accuracy (seed 002 Table 4)
      r.primary = "accuracy";
      break;
    }
    case TaskKind::Relatedness: {
      std::vector<double> p, g;
      for (size_t i = 0; i < examples.size(); ++i) {
        p.push_back(pred[i].score);
        g.push_back(examples[i].score);
      }
      r.metrics["pearson"] = pearson(p, g);
      r.metrics["spearman"] = spearman(p, g);
      r.metrics["mse"] = mse(p, g);
      r.primary = "pearson";
      break;
    }
    case TaskKind::Tag:
    case TaskKind::Srl: {
      std::vector<int64_t> p, g;
      std::vector<std::vector<std::string>> gold_names, pred_names;
      for (size_t i = 0; i < examples.size(); ++i) {
        const std::vector<int64_t>& gold = examples[i].tags;
        const std::vector<int64_t>& got = pred[i].tags;
        std::vector<std::string> gn, pn;
        for (size_t t = 0; t < got.size() && t < gold.size(); ++t) {
          p.push_back(got[t]);
          g.push_back(gold[t]);
          gn.push_back(label_names.at(static_cast<size_t>(gold[t])));
          pn.push_back(label_names.at(static_cast<size_t>(got[t])));
        }
        gold_names.push_back(gn);
        pred_names.push_back(pn);
      }
      r.metrics["token_accuracy"] = token_accuracy(p, g, kIgnoreTag);
      r.primary = "token_accuracy";
      if (model.task() == TaskKind::Srl) {
        const SrlScores srl = srl_scores(gold_names, pred_names);
        r.metrics["srl_f1"] = srl.f1;
        r.metrics["srl_precision"] = srl.precision;
        r.metrics["srl_recall"] = srl.recall;
        r.primary = "srl_f1";
      } else if (is_chunk_tagged(label_names)) {
        ChunkScores c = conll_chunk_f1(gold_names, pred_names);
        r.metrics["chunk_f1"] = c.f1;
        r.metrics["chunk_precision"] = c.precision;
        r.metrics["chunk_recall"] = c.recall;
        r.primary = "chunk_f1";
      }
      break;
    }
  }
  return r;
}

std::string json_metric_value(double v) {
  // JSON has no NaN or infinity: a non-finite value (a diverged loss, a
  // Pearson r of a constant prediction) is null.
  if (!std::isfinite(v)) return "null";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.6g", v);
  return buf;
}

std::string metrics_json(const std::map<std::string, double>& metrics) {
  std::string out = "{";
  for (const auto& [k, v] : metrics) out += (out.size() > 1 ? ", \"" : "\"") + k + "\": " + json_metric_value(v);
  return out + "}";
}

}  // namespace attn
