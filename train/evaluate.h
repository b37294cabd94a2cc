// The loss of each task on a batch, and evaluation of a model on a split:
//   classify/pair:  cross-entropy; accuracy and macro-F1
//   relatedness:    KL to the target distribution (seed 002 App. C); Pearson,
//                   Spearman and MSE of the expected score
//   tag:            per-token cross-entropy (padding ignored); token accuracy
//                   and, for chunk-tagged sets (IOB1, BIO, BIOES), entity
//                   F1, precision and recall as conlleval counts them
//   srl:            token accuracy and srl-eval.pl's argument precision,
//                   recall and F1 (train/srl_metrics.h)
//   locate:         cross-entropy over the passage's sentences; sentence accuracy
#pragma once
#include <map>
#include <string>
#include <vector>

#include "attn/models/task_model.h"
#include "attn/ops/loss/loss.h"
#include "attn/train/data/batching.h"
#include "attn/train/distributed/communicator.h"

namespace attn {

TaskInputs inputs_of(const Batch& batch);
// Moves a batch's tensors (ids, masks, labels, tags) to `device`.
void move_batch(Batch& batch, Device device);

// Mean loss (Reduction::Mean) or one value per example ([B], Reduction::None).
Tensor task_loss(TaskKind task, const Tensor& logits, const Batch& batch, Reduction reduction = Reduction::Mean);

// The loss the trainer minimises on a batch: the mean of the per-example
// losses, except for tagging, where it is the mean over every valid token of
// the batch (a long sentence weighs more than a short one). For a process's
// share of a batch (Batch::global_examples set) the sum over the share is
// divided by the whole batch's count, so the processes' losses and
// gradients add up to the whole batch's.
Tensor training_loss(TaskKind task, const Tensor& logits, const Batch& batch);

struct EvalResult {
  std::map<std::string, double> metrics;  // includes "loss"
  std::string primary;                    // the metric that picks the best checkpoint (higher is better)
  double primary_value() const { return metrics.at(primary); }
};

struct EvalOptions {
  int64_t batch_size = 64;
  int64_t max_len = 0;
  bool probabilities = false;  // predict(): also each class's probability (classify, pair)
  // A data-parallel run's processes (null: this process alone). Process r
  // runs the batches r, r + N, r + 2N, ... (the batches of one process's
  // run, so every example sees the same padding and the same arithmetic);
  // the predictions and per-batch losses are then summed over the processes
  // exactly (each slot has one non-zero contributor), and the metrics equal
  // the one-process run's.
  Communicator* processes = nullptr;
  // The model's noise generator, for a model that samples at evaluation
  // (ReSAN with rss_eval = sample): each batch reseeds it from noise_seed and
  // the batch's index (train/batch_noise.h), so the draws do not depend on
  // which process evaluates the batch. Null: left as it is.
  Generator* noise = nullptr;
  uint64_t noise_seed = 0;
};

// Runs in evaluation mode under NoGrad (restores the training flag after).
EvalResult evaluate(TaskModel& model, const std::vector<Example>& examples, const Vocabulary& vocab,
                    const std::vector<std::string>& label_names, const EvalOptions& options);

// Predicted class (classify/pair) or answer sentence (locate), expected score (relatedness) or tag ids
// (tag) for each example, in order.
struct Prediction {
  int64_t label = -1;
  double score = 0;
  std::vector<int64_t> tags;
  std::vector<double> probabilities;  // per class, with EvalOptions::probabilities
};
std::vector<Prediction> predict(TaskModel& model, const std::vector<Example>& examples, const Vocabulary& vocab,
                                const EvalOptions& options);

// {"a": 1.0, ...} with keys in order; a non-finite value is written null.
std::string metrics_json(const std::map<std::string, double>& metrics);
// One metric as a JSON value: %.6g, or null when not finite.
std::string json_metric_value(double v);

}  // namespace attn
