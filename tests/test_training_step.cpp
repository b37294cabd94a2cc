// The training step calls its extension and the gradient sync where
// train/training_step.h says: the extension before the forward pass, after
// the loss and after the backward pass; the sync after backward and before
// clipping, at every step; the step reports the gradient norm before
// clipping; and a step whose loss is not finite is never applied.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "attn/engine/copy.h"
#include "attn/engine/error.h"
#include "attn/models/masks.h"
#include "attn/models/task_model.h"
#include "attn/train/optim/sgd.h"
#include "attn/train/training_step.h"

namespace attn {
namespace {

Config small_config() { return Config::parse("encoder = bow\nembedding_dim = 6\nhead_hidden = 5\nkeep_prob = 1.0\n"); }

Batch small_batch() {
  Batch b;
  b.ids = from_indices({2, 3, 4, 0, 5, 6, 0, 0}, {2, 4});
  b.mask = length_mask({3, 2}, 4);
  b.labels = from_indices({0, 1}, {2});
  b.indices = {0, 1};
  return b;
}

double global_norm(const std::vector<Tensor>& params) {
  double squares = 0;
  for (const Tensor& p : params)
    if (p.grad().defined())
      for (double g : p.grad().to_vector()) squares += g * g;
  return std::sqrt(squares);
}

struct RecordingExtension : TrainingExtension {
  std::vector<std::string> calls;
  StepPlan plan;
  StepPlan before_forward(int64_t step) override {
    calls.push_back("before_forward " + std::to_string(step));
    return plan;
  }
  void after_loss(const Batch&, const Tensor& logits) override {
    calls.push_back(logits.defined() ? "after_loss" : "after_loss without logits");
  }
  void after_backward() override { calls.push_back("after_backward"); }
};

struct RecordingSync : GradientSync {
  std::vector<std::string>* calls = nullptr;
  std::vector<double> norms;  // the global gradient norm each call saw
  double synchronise(const std::vector<Tensor>& params, double loss) override {
    calls->push_back("synchronise " + std::to_string(params.size()));
    norms.push_back(global_norm(params));
    return loss;
  }
};

struct Fixture {
  Generator init{1}, noise{2};
  TaskModel model{small_config(), TaskKind::Classify, 10, 2, DType::F32, init, noise};
  Sgd optimizer{model.parameters(), 0.1, 0.0};
  RecordingExtension extension;
  RecordingSync sync;
  bool stopped = false;

  TrainingStep step(double clip_norm) {
    sync.calls = &extension.calls;
    StepParts parts;
    parts.model = &model;
    parts.task = TaskKind::Classify;
    parts.model_optimizer = &optimizer;
    parts.extension = &extension;
    parts.gradient_sync = &sync;
    parts.noise = &noise;
    parts.clip_norm = clip_norm;
    parts.before_stopping = [this] { stopped = true; };
    return TrainingStep(std::move(parts));
  }
};

std::vector<double> flat_weights(TaskModel& model) {
  std::vector<double> all;
  for (const Tensor& p : model.parameters()) {
    const std::vector<double> v = p.to_vector();
    all.insert(all.end(), v.begin(), v.end());
  }
  return all;
}

TEST(TrainingStep, CallsTheExtensionThenSynchronisesBeforeClipping) {
  Fixture f;
  const double clip = 1e-6;
  TrainingStep step = f.step(clip);
  const std::vector<double> before = flat_weights(f.model);
  TrainProgress at;
  at.step = 7;
  Batch batch = small_batch();
  const StepResult result = step.run(batch, at);
  EXPECT_TRUE(std::isfinite(result.loss));
  const std::vector<std::string> expected = {"before_forward 7", "after_loss", "after_backward",
                                             "synchronise " + std::to_string(f.model.parameters().size())};
  EXPECT_EQ(f.extension.calls, expected);
  // The sync saw the gradients of the backward pass, before clipping scaled
  // them down to the limit.
  ASSERT_EQ(f.sync.norms.size(), 1u);
  EXPECT_GT(f.sync.norms[0], 100 * clip);
  EXPECT_LE(global_norm(f.model.parameters()), clip * (1 + 1e-5));
  EXPECT_NE(flat_weights(f.model), before);  // updated
  EXPECT_FALSE(f.stopped);
  // The reported norm is the one before clipping: the sync's, up to the
  // order of a double sum of float32 squares.
  EXPECT_NEAR(result.grad_norm, f.sync.norms[0], 1e-9 * f.sync.norms[0]);
  EXPECT_TRUE(result.clipped);
}

TEST(TrainingStep, ReportsTheNormOfAnUnclippedStep) {
  Fixture f;
  TrainingStep step = f.step(1e9);
  Batch batch = small_batch();
  const StepResult result = step.run(batch, TrainProgress{});
  ASSERT_EQ(f.sync.norms.size(), 1u);
  ASSERT_GT(f.sync.norms[0], 0);
  // Unclipped, the gradients left on the parameters are the measured ones.
  EXPECT_NEAR(result.grad_norm, global_norm(f.model.parameters()), 1e-9 * f.sync.norms[0]);
  EXPECT_NEAR(result.grad_norm, f.sync.norms[0], 1e-9 * f.sync.norms[0]);
  EXPECT_FALSE(result.clipped);
}

TEST(TrainingStep, AModelThatDoesNotLearnIsNeitherBackpropagatedNorUpdated) {
  Fixture f;
  f.extension.plan.model_learns = false;
  TrainingStep step = f.step(5.0);
  const std::vector<double> before = flat_weights(f.model);
  Batch batch = small_batch();
  const StepResult result = step.run(batch, TrainProgress{});
  EXPECT_EQ(f.extension.calls.back(), "synchronise 0");  // no optimiser learns
  EXPECT_EQ(result.grad_norm, 0);  // no gradient was measured
  EXPECT_FALSE(result.clipped);
  for (const Tensor& p : f.model.parameters()) EXPECT_FALSE(p.grad().defined());
  EXPECT_EQ(flat_weights(f.model), before);
}

TEST(TrainingStep, ANonFiniteLossIsNotAppliedButStillSynchronised) {
  Fixture f;
  TrainingStep step = f.step(5.0);
  fill_(f.model.embedding().weight, std::nan(""));
  const std::vector<double> before = flat_weights(f.model);
  TrainProgress at;
  at.step = 3;
  Batch batch = small_batch();
  try {
    step.run(batch, at);
    FAIL() << "a NaN loss was applied";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("train: step 3 (epoch 1, batch 1): the loss is NaN"), std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(f.stopped);
  // Every process enters the sync at every step, so it ran before the check
  // stopped the run; no backward ran, so there was no gradient to combine.
  ASSERT_EQ(f.sync.norms.size(), 1u);
  EXPECT_EQ(f.sync.norms[0], 0.0);
  const std::vector<double> after = flat_weights(f.model);
  ASSERT_EQ(after.size(), before.size());
  for (size_t i = 0; i < after.size(); ++i)
    EXPECT_TRUE(after[i] == before[i] || (std::isnan(after[i]) && std::isnan(before[i]))) << i;
}

}  // namespace
}  // namespace attn
