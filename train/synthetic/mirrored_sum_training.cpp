#include "attn/train/synthetic/mirrored_sum_training.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "attn/engine/autograd.h"
#include "attn/engine/error.h"
#include "attn/ops/binary/binary.h"
#include "attn/ops/loss/loss.h"
#include "attn/train/optim/adam.h"
#include "attn/train/synthetic/mirrored_sum_models.h"

namespace attn {

MirroredSumRunResult train_mirrored_sum(const MirroredSumSpec& spec, const MirroredSumRunOptions& o,
                                        const std::function<void(int64_t step, double loss)>& progress) {
  check_mirrored_sum_spec(spec);
  ATTN_CHECK(o.train_samples >= 1 && o.test_samples >= 1, "mirrored sum",
             "the training and test sets need at least one sample each, got ", o.train_samples, " and ",
             o.test_samples);
  ATTN_CHECK(o.steps >= 1 && o.batch >= 1, "mirrored sum", "steps and batch must be positive, got ", o.steps, " and ",
             o.batch);
  const auto start = std::chrono::steady_clock::now();
  // Initialisation and dropout noise have their own streams, apart from the
  // data's counter stream: the model's seed never shifts a sample.
  Generator init(o.seed * 2 + 1), noise(o.seed * 2 + 2);
  MirroredSumModel model(mirrored_sum_encoder_config(o.model, o.hidden), spec.dim, DType::F32, init, noise);
  model.to(o.device);
  Adam adam(model.parameters(), AdamOptions{o.lr});

  const double mean = mirrored_sum_target_mean(spec), sd = std::sqrt(mirrored_sum_mean_predictor_mse(spec));
  auto predict = [&](const MirroredSumBatch& b) {
    return model.forward(b.x.to(o.device), b.mask.to(o.device)) * sd + mean;
  };
  MirroredSumRunResult result;
  result.parameters = model.parameter_count();
  model.set_training(true);
  for (int64_t step = 1; step <= o.steps; ++step) {
    // The batch's samples, wrapped at the end of the training set (a batch
    // that straddles the end is two pieces, so it always holds `batch`).
    const int64_t first = ((step - 1) * o.batch) % o.train_samples;
    const int64_t count = std::min(o.batch, o.train_samples);
    adam.zero_grad();
    Tensor loss;
    int64_t taken = 0;
    while (taken < count) {
      const int64_t at = (first + taken) % o.train_samples;
      const int64_t piece = std::min(count - taken, o.train_samples - at);
      MirroredSumBatch b = mirrored_sum_batch(spec, MirroredSumSplit::Train, at, piece);
      Tensor part = mse_loss(predict(b), b.y.to(o.device), Reduction::Sum);
      loss = loss.defined() ? loss + part : part;
      taken += piece;
    }
    loss = loss * (1.0 / static_cast<double>(count * spec.dim));
    loss.backward();
    adam.step();
    result.final_train_loss = loss.item();
    ATTN_CHECK(std::isfinite(result.final_train_loss), "mirrored sum", "model '", o.model,
               "': the training loss is not finite at step ", step);
    if (progress) progress(step, result.final_train_loss);
  }

  NoGrad no_grad;
  model.set_training(false);
  double sum = 0;
  const int64_t eval_batch = std::max<int64_t>(o.batch, 64);
  for (int64_t first = 0; first < o.test_samples; first += eval_batch) {
    const int64_t count = std::min(eval_batch, o.test_samples - first);
    MirroredSumBatch b = mirrored_sum_batch(spec, MirroredSumSplit::Test, first, count);
    sum += mse_loss(predict(b), b.y.to(o.device), Reduction::Sum).item();
  }
  result.test_mse = sum / static_cast<double>(o.test_samples * spec.dim);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace attn
