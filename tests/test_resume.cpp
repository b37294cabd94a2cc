// Resumable training checkpoints in process: save_training_checkpoint /
// load_training_checkpoint restore the model, every optimiser's state and the
// loop position exactly; a checkpoint of another model is rejected naming the
// file; the Ctrl-C path of train_model saves a checkpoint that --resume
// continues; a temporary file left by a killed writer is never taken for the
// checkpoint. (scripts/check_resume.sh does the same with real SIGINT and
// SIGKILL against the attn binary.)
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <memory>

#include "attn/nn/safetensors.h"
#include "attn/ops/reduce/reduce.h"
#include "test_data_util.h"
#include "attn/train/optim/adam.h"
#include "attn/train/checkpoint.h"
#include "attn/train/evaluate.h"
#include "attn/train/interrupt.h"
#include "attn/train/trainer.h"

namespace attn {
namespace {

using namespace test_data;

Config tiny_config(const std::string& hidden) {
  Config c;
  c.set("encoder", "mtsa");
  c.set("embedding_dim", "8");
  c.set("hidden", hidden);
  c.set("head_hidden", "8");
  c.set("keep_prob", "0.9");
  return c;
}

// A classifier with its own generators, and one Adam over all its parameters.
struct Trainee {
  Generator init, noise;
  TaskModel model;
  Adam adam;
  Trainee(const Config& config, uint64_t seed)
      : init(seed), noise(seed + 1), model(config, TaskKind::Classify, 12, 3, DType::F32, init, noise),
        adam(model.parameters(), AdamOptions{}) {
    model.set_training(true);
  }
  // One supervised step on a fixed batch.
  void step() {
    TaskInputs in;
    in.ids = from_indices({2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 4, 4}, {3, 4});
    in.mask = ones({3, 4}, DType::U8);
    Batch batch;
    batch.labels = from_indices({0, 1, 2}, {3});
    batch.indices = {0, 1, 2};
    adam.zero_grad();
    task_loss(TaskKind::Classify, model.logits(in), batch).backward();
    adam.step();
  }
};

std::vector<double> values(const Tensor& t) { return t.to_vector(); }

void expect_same_state(const NamedTensors& a, const NamedTensors& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].first, b[i].first);
    EXPECT_EQ(values(a[i].second), values(b[i].second)) << a[i].first;
  }
}

TrainProgress some_progress() {
  TrainProgress p;
  p.epoch = 2;
  p.batch_in_epoch = 7;
  p.step = 41;
  p.best_dev = 0.8123456789012345;
  p.best_step = 30;
  p.epoch_shuffle_state = {1, 2, 3, 18446744073709551615ull};
  p.noise_state = {99, 98, 97, 96};
  p.baseline = -0.3141592653589793;
  return p;
}

TEST(TrainingCheckpoint, RoundTripRestoresModelOptimizerAndProgress) {
  const std::string path = fresh_dir() + "/last.safetensors";
  Trainee a(tiny_config("8"), 1);
  a.step();
  a.step();
  TrainProgress saved = some_progress();
  save_training_checkpoint(path, a.model, {&a.adam}, saved);

  Trainee b(tiny_config("8"), 5);  // other initial weights, no optimiser state
  ASSERT_NE(values(b.model.named_state()[0].second), values(a.model.named_state()[0].second));
  TrainProgress p = load_training_checkpoint(path, b.model, {&b.adam});
  expect_same_state(a.model.named_state(), b.model.named_state());
  expect_same_state(a.adam.state(), b.adam.state());
  EXPECT_EQ(b.adam.step_count(), 2);
  EXPECT_EQ(p.epoch, saved.epoch);
  EXPECT_EQ(p.batch_in_epoch, saved.batch_in_epoch);
  EXPECT_EQ(p.step, saved.step);
  EXPECT_EQ(p.best_dev, saved.best_dev);  // bit-exact through the text metadata
  EXPECT_EQ(p.best_step, saved.best_step);
  EXPECT_EQ(p.epoch_shuffle_state, saved.epoch_shuffle_state);
  EXPECT_EQ(p.noise_state, saved.noise_state);
  EXPECT_EQ(p.baseline, saved.baseline);
}

TEST(TrainingCheckpoint, RestoredTraineeTakesTheSameNextSteps) {
  // Adam's moments and step counts (bias correction) must all come back:
  // the next updates are then identical.
  const std::string path = fresh_dir() + "/last.safetensors";
  Trainee a(tiny_config("8"), 1);
  a.step();
  a.step();
  TrainProgress progress;
  progress.noise_state = a.noise.state();
  progress.epoch_shuffle_state = a.init.state();  // an all-zero generator state is rejected on load
  save_training_checkpoint(path, a.model, {&a.adam}, progress);
  Trainee b(tiny_config("8"), 3);
  b.noise.set_state(load_training_checkpoint(path, b.model, {&b.adam}).noise_state);
  for (int i = 0; i < 3; ++i) {
    a.step();
    b.step();
  }
  expect_same_state(a.model.named_state(), b.model.named_state());
  expect_same_state(a.adam.state(), b.adam.state());
}

TEST(TrainingCheckpoint, CheckpointOfAnotherModelConfigIsRejectedNamingTheFile) {
  const std::string path = fresh_dir() + "/last.safetensors";
  Trainee a(tiny_config("8"), 1);
  a.step();
  save_training_checkpoint(path, a.model, {&a.adam}, TrainProgress());
  Trainee wider(tiny_config("16"), 1);
  std::vector<double> before = values(wider.model.named_state()[0].second);
  std::string message = error_of([&] { load_training_checkpoint(path, wider.model, {&wider.adam}); });
  EXPECT_THAT(message, HasSubstr(path));
  EXPECT_THAT(message, HasSubstr("does not fit this model"));
  EXPECT_THAT(message, HasSubstr("[8, 8]"));    // what the checkpoint has
  EXPECT_THAT(message, HasSubstr("[16, 8]"));   // what the model has
  EXPECT_EQ(values(wider.model.named_state()[0].second), before);  // untouched

  Config bow = tiny_config("8");
  bow.set("encoder", "bow");
  bow.set("hidden", "8");
  Generator init(1), noise(2);
  TaskModel other(bow, TaskKind::Classify, 12, 3, DType::F32, init, noise);
  Adam adam(other.parameters(), AdamOptions{});
  message = error_of([&] { load_training_checkpoint(path, other, {&adam}); });
  EXPECT_THAT(message, HasSubstr(path));
  EXPECT_THAT(message, HasSubstr("encoder"));
}

TEST(TrainingCheckpoint, ModelWeightsAndOptimiserCountMismatchesAreRejected) {
  const std::string dir = fresh_dir();
  Trainee a(tiny_config("8"), 1);
  a.step();
  // A best.safetensors-style file (model state only) is not resumable.
  save_safetensors(dir + "/best.safetensors", a.model.named_state());
  EXPECT_THAT(error_of([&] { load_training_checkpoint(dir + "/best.safetensors", a.model, {&a.adam}); }),
              HasSubstr("is not an attn training checkpoint"));
  // A ReSAN checkpoint has two optimisers; this run has one.
  save_training_checkpoint(dir + "/last.safetensors", a.model, {&a.adam, &a.adam}, TrainProgress());
  EXPECT_THAT(error_of([&] { load_training_checkpoint(dir + "/last.safetensors", a.model, {&a.adam}); }),
              HasSubstr("holds 2 optimiser states, this run has 1"));
  EXPECT_THAT(error_of([&] { load_training_checkpoint(dir + "/missing.safetensors", a.model, {&a.adam}); }),
              HasSubstr("missing.safetensors"));
}

// ---------- The trainer's interrupt and resume paths ----------

TrainOptions tiny_run(const std::string& data, const std::string& run_dir) {
  TrainOptions o;
  o.data.data = data;
  o.data.verbose = false;
  o.run_dir = run_dir;
  o.model = tiny_config("8");
  o.min_count = 1;
  o.batch_size = 9;  // 81 train examples: 9 steps per epoch
  o.epochs = 2;
  o.checkpoint_every = 2;
  o.verbose = false;
  return o;
}

TEST(TrainerResume, InterruptSavesACheckpointThatResumeContinues) {
  const std::string dir = fresh_dir();
  TrainOptions o = tiny_run(test_data::write_alpha_beta_tsv(dir), dir + "/run");
  install_interrupt_handler();
  std::raise(SIGINT);  // what Ctrl-C does: only a flag the loop polls after each step
  ASSERT_TRUE(interrupt_requested());
  TrainResult first = train_model(o);
  clear_interrupt();
  EXPECT_TRUE(first.interrupted);
  EXPECT_EQ(first.steps, 1);
  std::map<std::string, std::string> meta;
  load_safetensors(o.run_dir + "/last.safetensors", &meta);
  EXPECT_EQ(meta.at("step"), "1");
  EXPECT_FALSE(std::filesystem::exists(o.run_dir + "/test_metrics.json"));

  o.resume = true;
  TrainResult second = train_model(o);
  EXPECT_FALSE(second.interrupted);
  EXPECT_EQ(second.steps, 18);  // counting continues from the checkpoint
  EXPECT_EQ(second.primary, "accuracy");
  load_safetensors(o.run_dir + "/last.safetensors", &meta);
  EXPECT_EQ(meta.at("step"), "18");
  EXPECT_EQ(meta.at("epoch"), "2");

  // Resuming a finished run evaluates again and changes nothing.
  TrainResult again = train_model(o);
  EXPECT_EQ(again.steps, 18);
  EXPECT_EQ(again.test.metrics, second.test.metrics);
  EXPECT_EQ(again.primary, "accuracy");
}

TEST(TrainerResume, LeftoverTemporaryFileIsNeverTakenForTheCheckpoint) {
  // A writer killed mid-save leaves last.safetensors.tmp.<pid>; the real file
  // stays whole and resuming reads it, not the fragment.
  const std::string dir = fresh_dir();
  TrainOptions o = tiny_run(test_data::write_alpha_beta_tsv(dir), dir + "/run");
  o.max_steps = 4;
  train_model(o);
  std::map<std::string, std::string> meta;
  load_safetensors(o.run_dir + "/last.safetensors", &meta);
  ASSERT_EQ(meta.at("step"), "4");
  write(o.run_dir, "last.safetensors.tmp.999999", "\x10\x00\x00\x00\x00\x00\x00\x00{\"trunc");
  o.max_steps = 0;
  o.resume = true;
  TrainResult r = train_model(o);
  EXPECT_EQ(r.steps, 18);
  load_safetensors(o.run_dir + "/last.safetensors", &meta);
  EXPECT_EQ(meta.at("step"), "18");
}

TEST(TrainerResume, ResumeWithoutACheckpointFailsClearly) {
  const std::string dir = fresh_dir();
  TrainOptions o = tiny_run(test_data::write_alpha_beta_tsv(dir), dir + "/run");
  o.resume = true;
  EXPECT_THAT(error_of([&] { train_model(o); }), HasSubstr("--resume: no checkpoint at '" + o.run_dir));
}

}  // namespace
}  // namespace attn
