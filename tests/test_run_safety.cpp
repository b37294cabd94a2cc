// The training loop never writes a non-finite weight: a step with a
// non-finite loss or gradient norm is not applied, the run stops naming the
// first kernel that produced the value, and best/last checkpoints, weights
// files and the models eval/predict load are refused when non-finite.
// `train --detect-anomaly` checks every kernel and stays quiet on a healthy run.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

#include "attn/engine/anomaly.h"
#include "attn/nn/safetensors.h"
#include "test_data_util.h"
#include "attn/train/optim/adam.h"
#include "attn/util/atomic_file.h"
#include "attn/train/checkpoint.h"
#include "attn/train/finite_check.h"
#include "attn/train/run/saved_run.h"
#include "attn/train/trainer.h"

namespace attn {
namespace {

using namespace test_data;

std::string write_data(const std::string& dir) { return test_data::write_marker_data(dir, 128, 40, 40, 5); }

TrainOptions options(const std::string& dir, const std::string& encoder) {
  TrainOptions o;
  o.data.data = write_data(dir);
  o.data.format = "tsv";
  o.data.verbose = false;
  o.run_dir = dir + "/run";
  o.model.set("encoder", encoder);
  o.model.set("embedding_dim", "8");
  o.model.set("head_hidden", "8");
  if (encoder != "bow") o.model.set("hidden", "8");
  o.min_count = 1;
  o.batch_size = 16;
  o.epochs = 3;
  o.verbose = false;
  return o;
}

void expect_finite_if_present(const std::string& path) {
  if (!path_exists(path)) return;
  std::map<std::string, Tensor> all = load_safetensors(path);
  EXPECT_EQ(first_nonfinite(all), "") << path << " holds a non-finite tensor";
}

TEST(RunSafety, HugeLearningRateStopsNamingTheKernelAndKeepsCheckpointsFinite) {
  const std::string dir = fresh_dir();
  TrainOptions o = options(dir, "mtsa");
  o.lr = 1e6;
  o.eval_every = 2;
  o.checkpoint_every = 1;
  const std::string msg = error_of([&] { train_model(o); });
  EXPECT_THAT(msg, HasSubstr("the step was not applied"));
  EXPECT_THAT(msg, HasSubstr("train: step "));
  EXPECT_THAT(msg, HasSubstr("the first non-finite value: detect-anomaly: kernel '"));
  EXPECT_THAT(msg, ::testing::Not(HasSubstr("try a lower --lr")));
  expect_finite_if_present(o.run_dir + "/best.safetensors");
  expect_finite_if_present(o.run_dir + "/last.safetensors");
  EXPECT_TRUE(path_exists(o.run_dir + "/last.safetensors"));  // checkpoint_every 1: written before the failure
}

TEST(RunSafety, DetectAnomalyStopsTrainingAtTheFirstNonFiniteKernel) {
  const std::string dir = fresh_dir();
  TrainOptions o = options(dir, "mtsa");
  o.lr = 1e6;
  o.detect_anomaly = true;
  std::string msg;
  try {
    train_model(o);
  } catch (const AnomalyError& e) {
    msg = e.what();
  }
  EXPECT_THAT(msg, HasSubstr("train --detect-anomaly: stopped at step "));
  EXPECT_THAT(msg, HasSubstr("kernel '"));
  expect_finite_if_present(o.run_dir + "/best.safetensors");
  expect_finite_if_present(o.run_dir + "/last.safetensors");
}

TEST(RunSafety, DetectAnomalyIsQuietOnAHealthyRun) {
  const std::string dir = fresh_dir();
  TrainOptions o = options(dir, "mtsa");
  o.lr = 0.01;
  o.epochs = 1;
  o.max_steps = 3;
  o.detect_anomaly = true;
  TrainResult r = train_model(o);
  EXPECT_EQ(r.steps, 3);
  EXPECT_EQ(kernel_observer(), nullptr);  // removed when the run ends
}

TEST(RunSafety, CheckpointWithANanIsRefusedAndTheOldFileKept) {
  const std::string dir = fresh_dir();
  Generator init(1), noise(2);
  Config c;
  c.set("encoder", "bow");
  c.set("embedding_dim", "4");
  c.set("head_hidden", "4");
  TaskModel model(c, TaskKind::Classify, 10, 2, DType::F32, init, noise);
  Adam adam(model.parameters(), AdamOptions{});
  const std::string path = dir + "/last.safetensors";
  save_training_checkpoint(path, model, {&adam}, TrainProgress{});
  const std::string name = model.named_parameters()[0].first;
  write_element(model.named_parameters()[0].second, 0, std::nan(""));
  EXPECT_THAT(error_of([&] { save_training_checkpoint(path, model, {&adam}, TrainProgress{}); }),
              HasSubstr("'model." + name + "' holds a NaN or infinite value"));
  expect_finite_if_present(path);
  EXPECT_TRUE(path_exists(path));
}

TEST(RunSafety, EvalAndPredictRefuseNonFiniteWeights) {
  const std::string dir = fresh_dir();
  TrainOptions o = options(dir, "bow");
  o.epochs = 1;
  o.lr = 0.01;
  train_model(o);
  const std::string best = o.run_dir + "/best.safetensors";
  ASSERT_NO_THROW(load_saved_run(o.run_dir));
  std::vector<std::pair<std::string, Tensor>> poisoned;
  for (auto& [name, t] : load_safetensors(best)) poisoned.emplace_back(name, t);
  write_element(poisoned.back().second, 0, std::numeric_limits<double>::infinity());
  save_safetensors(best, poisoned);
  EXPECT_THAT(error_of([&] { load_saved_run(o.run_dir); }),
              HasSubstr("'" + poisoned.back().first + "' holds a NaN or infinite value"));
}

}  // namespace
}  // namespace attn
