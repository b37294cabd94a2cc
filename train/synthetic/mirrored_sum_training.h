// Trains one mirrored-summation model (train/synthetic/mirrored_sum_models.h)
// at one K with MSE and Adam, then measures its MSE on the test split.
//
// Step s (1-based) trains on training samples (s-1)*batch .. s*batch - 1,
// taken modulo train_samples, so a run of steps * batch > train_samples
// passes over the same samples again in the same order (epochs). The
// samples are i.i.d. draws, so no shuffling is needed for the batches to be
// unbiased.
//
// The model's output is the target standardised, z = (y - E[y]) / sd(y)
// (mirrored_sum_target_mean, mirrored_sum_mean_predictor_mse): the targets'
// mean K/4 and spread grow with K, and a head starting near 0 would spend its
// first thousands of Adam steps (about lr per step) walking its bias to K/4;
// standardised, every K starts from the same loss scale and a zero output is
// already the best constant. The prediction is E[y] + sd(y) * z, and the
// training loss and test MSE are in the units of y. The test MSE is the mean over all test samples and all d
// features of (prediction - target)^2, in evaluation mode (dropout off).
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "attn/engine/device.h"
#include "attn/train/synthetic/mirrored_sum_data.h"

namespace attn {

struct MirroredSumRunOptions {
  std::string model = "transformer";
  int64_t hidden = 60;
  int64_t train_samples = 200000;
  int64_t test_samples = 200000;
  int64_t steps = 1000;
  int64_t batch = 64;
  double lr = 1e-3;  // Adam (Kingma & Ba's default)
  uint64_t seed = 1;  // the data (through spec.seed) and the initialisation
  Device device = Device::CPU;
};

struct MirroredSumRunResult {
  double test_mse = 0;
  double final_train_loss = 0;  // the last step's batch MSE
  double seconds = 0;           // training and test together
  int64_t parameters = 0;
};

// `progress(step, loss)` is called after every step when given.
MirroredSumRunResult train_mirrored_sum(const MirroredSumSpec& spec, const MirroredSumRunOptions& options,
                                        const std::function<void(int64_t step, double loss)>& progress = nullptr);

}  // namespace attn
