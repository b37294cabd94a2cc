// What a model's training adds to the plain loop, as calls at fixed points.
// The plain step (train/training_step.h) and loop (train/trainer.cpp) train
// every parameter on the task loss with one optimiser; a model that needs
// more (ReSAN's selection policy, trained by REINFORCE on its own optimiser:
// train/reinforce/reinforce_extension.h) supplies an extension, and the loop
// knows nothing of what the extension does beyond calling it. This base class
// is the extension of plain training: every call does nothing.
//
// The calls of one step, in order:
//   before_forward  -> forward -> loss -> after_loss -> backward of the loss
//   -> after_backward -> gradient sync -> clip -> finite check -> update
// and of the loop: begin once before the first step, add_dev_metrics and
// after_dev_evaluation at each dev evaluation, save_state before each
// resumable checkpoint, end_training before the test evaluation.
#pragma once
#include <cstdint>
#include <map>
#include <string>

#include "attn/engine/tensor.h"
#include "attn/train/checkpoint.h"
#include "attn/train/evaluate.h"
#include "attn/train/optim/optimizer.h"

namespace attn {

// Which optimisers learn at a step.
struct StepPlan {
  bool model_learns = true;       // the task loss is backpropagated and the model's optimiser steps
  bool extension_learns = false;  // the extension's optimiser steps on the gradients after_loss left
};

class TrainingExtension {
 public:
  virtual ~TrainingExtension() = default;

  // The parameters the extension trains itself, by name: the model's
  // optimiser and the weight decay leave them out.
  virtual bool trains(const std::string& /*parameter_name*/) const { return false; }
  // The optimiser of those parameters (null: none). Checkpoints save its
  // state after the model optimiser's.
  virtual Optimizer* optimizer() { return nullptr; }
  // Once, before the first step, with the position the run starts from (a
  // fresh run's, or the one a resumed checkpoint restored; save_state wrote
  // the extension's part of it).
  virtual void begin(const TrainProgress& /*start*/, int64_t /*batches_per_epoch*/) {}

  // Before the forward pass of step `step` (0-based): may set how the model
  // runs at this step, and says which optimisers learn.
  virtual StepPlan before_forward(int64_t /*step*/) { return {}; }
  // After the forward pass and the loss, before the loss is backpropagated:
  // the extension may backpropagate an objective of its own (the graph of
  // the forward pass is kept for the loss's backward when the model learns).
  // It must leave gradients on its own parameters only.
  virtual void after_loss(const Batch& /*batch*/, const Tensor& /*logits*/) {}
  // After the loss's backward pass, which may have reached the extension's
  // parameters: the place to put back the gradients after_loss made.
  virtual void after_backward() {}

  // Adds the extension's entries to the dev evaluation's metrics.jsonl line.
  virtual void add_dev_metrics(std::map<std::string, double>& /*line*/) const {}
  // After each dev evaluation of step `step` (steps trained so far).
  virtual void after_dev_evaluation(const EvalResult& /*dev*/, int64_t /*step*/) {}
  // Writes the extension's state into the position a checkpoint saves.
  virtual void save_state(TrainProgress& /*progress*/) const {}
  // After the last step, before the best checkpoint is loaded and tested.
  virtual void end_training() {}
};

}  // namespace attn
