// Resumable training checkpoints: the model's state, every optimiser's state
// and the loop's position, in one safetensors file written atomically (a
// SIGKILL mid-save leaves the previous checkpoint intact).
//   tensors:  "model.<state name>", "optim<k>.<optimiser state name>"
//   metadata: format, epoch, batch_in_epoch, step, best_dev, best_step,
//             epoch_shuffle_state, noise_state, baseline, train_loss_sum,
//             train_loss_count, data_checksum_4x64 (of the tensors; files
//             written before 2026-11-28 carry the byte-wise data_checksum)
#pragma once
#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "attn/nn/module.h"
#include "attn/train/optim/optimizer.h"

namespace attn {

class TaskModel;

struct TrainProgress {
  int64_t epoch = 0;           // the epoch in progress (0-based)
  int64_t batch_in_epoch = 0;  // batches of that epoch already trained
  int64_t step = 0;            // optimisation steps so far
  double best_dev = -std::numeric_limits<double>::infinity();
  int64_t best_step = -1;
  std::array<uint64_t, 4> epoch_shuffle_state{};  // shuffling generator at the start of `epoch`
  std::array<uint64_t, 4> noise_state{};          // dropout/sampling generator now (each step reseeds it)
  double baseline = 0;                            // REINFORCE moving baseline
  double train_loss_sum = 0;                      // the running mean of the epoch's training loss:
  int64_t train_loss_count = 0;                   //   sum and steps, so it survives a resume
  // ReSAN's warm-up judged by the dev loss (train/reinforce/reinforce.h, DevLossWarmup).
  int64_t warmup_end_step = -1;                   // -1: not over yet
  double warmup_dev_loss = std::numeric_limits<double>::infinity();  // the last dev loss seen in it
};

void save_training_checkpoint(const std::string& path, const Module& model,
                              const std::vector<const Optimizer*>& optimizers, const TrainProgress& progress);

// Restores model and optimisers in place and returns the loop position.
// Throws naming the file when it is not a checkpoint of this model, when its
// data does not match its checksum (data_checksum_4x64, or an earlier file's
// data_checksum), or when a field
// is malformed or out of range (negative, unparsable, zero generator state,
// best_dev not fitting best_step).
TrainProgress load_training_checkpoint(const std::string& path, Module& model,
                                       const std::vector<Optimizer*>& optimizers);

// Throws when the loop position cannot belong to a run with these batches
// per epoch and epochs (so a corrupted position never spins or trains 0 steps).
void check_progress_fits_run(const TrainProgress& p, int64_t batches_per_epoch, int64_t epochs,
                             const std::string& path);

// Writes plain model weights (best.safetensors) with a data checksum.
void save_model_weights(const std::string& path, const NamedTensors& state,
                        std::map<std::string, std::string> metadata = {});

// best.safetensors of a run: the model's state (refused when not finite,
// naming `path`), the step it was taken at, and the mode of the encoder's
// selection policy, which load_best_weights applies again
// (train/reinforce/selection_policy.h).
void save_best_weights(const std::string& path, TaskModel& model, int64_t step);
void load_best_weights(const std::string& path, TaskModel& model);

// The model weights of a file (checksum verified when it has one): a plain weights file (best.safetensors) as is,
// or the "model." part of a training checkpoint (last.safetensors).
// `metadata`, when given, receives the file's metadata.
std::map<std::string, Tensor> load_model_weights(const std::string& path,
                                                 std::map<std::string, std::string>* metadata = nullptr);

}  // namespace attn
