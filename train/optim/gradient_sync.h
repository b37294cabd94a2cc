// Where the gradients of several processes become one: the training step
// (train/training_step.cpp) calls GradientSync::synchronise after the
// backward pass and before clipping, so clipping, the finite check and the
// optimiser all see the gradients every process agrees on. A data-parallel
// run (one process per device, each on its share of the batch) implements it
// with an all-reduce that sums the gradients (MPI); a run in one
// process has nothing to combine.
#pragma once
#include <vector>

#include "attn/engine/tensor.h"

namespace attn {

class GradientSync {
 public:
  virtual ~GradientSync() = default;
  // Replaces each gradient of `params` by its sum over the processes (each
  // process's loss is already divided by the whole batch's count, so the sum
  // is the batch's mean gradient) and returns the summed `loss`. Called at
  // every step, also when the loss is not finite and no gradient was
  // computed, so that every process enters each collective operation the
  // same number of times; a parameter without a gradient (p.grad()
  // undefined) has none this step in this process, and keeps none when no
  // process has one.
  virtual double synchronise(const std::vector<Tensor>& params, double loss) = 0;
};

// One process: its gradients are already the run's.
class SingleProcessSync final : public GradientSync {
 public:
  double synchronise(const std::vector<Tensor>& /*params*/, double loss) override { return loss; }
};

}  // namespace attn
