// One optimisation step on a mini-batch: batch, forward, loss, backward,
// gradient synchronisation, clip, finite check, update (TrainingStep::run
// reads in that order). What a model adds to it (ReSAN's REINFORCE) comes in
// through a TrainingExtension's calls; where a data-parallel run combines the
// gradients of its processes is the GradientSync call between backward and
// clip (train/optim/gradient_sync.h).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "attn/models/task_model.h"
#include "attn/train/checkpoint.h"
#include "attn/train/data/batching.h"
#include "attn/train/optim/gradient_sync.h"
#include "attn/train/optim/optimizer.h"
#include "attn/train/optim/weight_decay.h"
#include "attn/train/training_extension.h"

namespace attn {

// What a step works with; the step owns none of it.
struct StepParts {
  TaskModel* model = nullptr;
  TaskKind task = TaskKind::Classify;
  Optimizer* model_optimizer = nullptr;  // every parameter the extension does not train
  WeightDecay* decay = nullptr;          // added to the loss; null: none
  TrainingExtension* extension = nullptr;
  GradientSync* gradient_sync = nullptr;
  Generator* noise = nullptr;            // the model's dropout and sampling generator
  // Each step's forward pass seeds `noise` from this and the step number and
  // keys it on the examples (train/batch_noise.h).
  uint64_t noise_seed = 0;
  double clip_norm = 0;                  // global norm limit per optimiser (0: no clipping)
  Device device = Device::CPU;           // where each batch is moved
  // Called before a failing step stops the run (the loop ends its progress line).
  std::function<void()> before_stopping;
};

// What a step measured, for the step log (train/step_log.h).
struct StepResult {
  double loss = 0;       // the mini-batch's loss, with the weight decay penalty
  // The global L2 norm of the gradients before clipping: over every
  // optimiser that learned at this step (sqrt of the sum of their squared
  // norms; each optimiser is clipped to the limit on its own).
  double grad_norm = 0;
  bool clipped = false;  // some optimiser's norm exceeded the clipping limit
};

class TrainingStep {
 public:
  explicit TrainingStep(StepParts parts);

  // Trains on `batch` (moved to the device) at the loop position `at` and
  // returns its loss and gradient norm. A step whose loss or gradient norm is not finite is not
  // applied: it throws, naming the position, the first kernel that wrote a
  // non-finite value (found by re-running the step under anomaly detection
  // with the same dropout noise) and how large the weights are.
  StepResult run(Batch& batch, const TrainProgress& at);

 private:
  double compute_gradients(const Batch& batch, const StepPlan& plan, int64_t step, bool backward_when_nonfinite);
  std::vector<Optimizer*> learning(const StepPlan& plan) const;
  [[noreturn]] void stop_on_nonfinite(const Batch& batch, const StepPlan& plan, const std::string& what,
                                      const TrainProgress& at);

  StepParts parts_;
  std::vector<Optimizer*> optimizers_;  // the model's, then the extension's
  double clip_limit_;
};

}  // namespace attn
