// Resumable training checkpoints: the model's state, every optimiser's state
// and the loop's position, in one safetensors file written atomically (a
// SIGKILL mid-save leaves the previous checkpoint intact).
//   tensors:  "model.<state name>", "optim<k>.<optimiser state name>"
//   metadata: format, epoch, batch_in_epoch, step, best_dev, best_step,
//             epoch_shuffle_state, noise_state, baseline
#pragma once
#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "nn/module.h"
#include "train/optimizer.h"

namespace attn {

struct TrainProgress {
  int64_t epoch = 0;           // the epoch in progress (0-based)
  int64_t batch_in_epoch = 0;  // batches of that epoch already trained
  int64_t step = 0;            // optimisation steps so far
  double best_dev = -std::numeric_limits<double>::infinity();
  int64_t best_step = -1;
  std::array<uint64_t, 4> epoch_shuffle_state{};  // shuffling generator at the start of `epoch`
  std::array<uint64_t, 4> noise_state{};          // dropout/sampling generator now
  double baseline = 0;                            // REINFORCE moving baseline
};

void save_training_checkpoint(const std::string& path, const Module& model,
                              const std::vector<const Optimizer*>& optimizers, const TrainProgress& progress);

// Restores model and optimisers in place and returns the loop position.
// Throws naming the file when it is not a checkpoint of this model.
TrainProgress load_training_checkpoint(const std::string& path, Module& model,
                                       const std::vector<Optimizer*>& optimizers);

// The model weights of a file: a plain weights file (best.safetensors) as is,
// or the "model." part of a training checkpoint (last.safetensors).
std::map<std::string, Tensor> load_model_weights(const std::string& path);

}  // namespace attn
