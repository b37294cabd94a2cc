// Bad input that must give a clear error (issue 11, items 2-7): every
// checkpoint field validated, a data checksum, range-checked flags, an
// existing run never touched without --resume/--overwrite, a changed run
// refused on --resume, and a run folder tidied after SIGKILL.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "attn/util/json.h"
#include "attn/nn/safetensors.h"
#include "test_data_util.h"
#include "attn/train/optim/adam.h"
#include "attn/util/atomic_file.h"
#include "attn/train/checkpoint.h"
#include "attn/util/cli_args.h"
#include "attn/train/cli/commands.h"
#include "attn/train/run/run_folder.h"
#include "attn/train/trainer.h"

namespace attn {
namespace {

using namespace test_data;

// ---------- checkpoints ----------

struct Saved {
  Generator init{1}, noise{2};
  TaskModel model;
  Adam adam;
  Saved() : model(config(), TaskKind::Classify, 10, 2, DType::F32, init, noise), adam(model.parameters(), {}) {}
  static Config config() {
    Config c;
    c.set("encoder", "bow");
    c.set("embedding_dim", "4");
    c.set("head_hidden", "4");
    return c;
  }
};

TrainProgress valid_progress() {
  TrainProgress p;
  p.epoch = 1;
  p.batch_in_epoch = 2;
  p.step = 7;  // 5 batches per epoch
  p.best_dev = 0.5;
  p.best_step = 5;
  p.epoch_shuffle_state = {1, 2, 3, 4};
  p.noise_state = {5, 6, 7, 8};
  p.train_loss_sum = 1.5;
  p.train_loss_count = 2;
  return p;
}

// Rewrites one metadata value of a checkpoint (bypassing the writer's checks).
void set_metadata(const std::string& path, const std::string& key, const std::string& value) {
  std::map<std::string, std::string> m;
  std::map<std::string, Tensor> all = load_safetensors(path, &m);
  m[key] = value;
  save_safetensors(path, {all.begin(), all.end()}, m);
}

TEST(CheckpointValidation, EveryMalformedFieldIsAClearError) {
  const std::string dir = fresh_dir();
  const std::string path = dir + "/last.safetensors";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"step", "-3"},          {"step", "12abc"},       {"step", "99999999999999999999999"},
      {"epoch", ""},           {"batch_in_epoch", "x"}, {"best_dev", "nan"},
      {"best_step", "9"},      {"noise_state", "0,0,0,0"}, {"epoch_shuffle_state", "1,2,3"},
      {"noise_state", "1,2,3,-4"}, {"optimizers", "1e3"}, {"baseline", "inf"}, {"train_loss_count", "100"}};
  for (const auto& [key, value] : cases) {
    Saved s;
    save_training_checkpoint(path, s.model, {&s.adam}, valid_progress());
    set_metadata(path, key, value);
    Saved t;
    const std::string msg = error_of([&] { load_training_checkpoint(path, t.model, {&t.adam}); });
    EXPECT_THAT(msg, HasSubstr("checkpoint: '" + path + "'")) << key << " = " << value;
  }
}

TEST(CheckpointValidation, PositionMustFitTheRun) {
  TrainProgress p = valid_progress();
  EXPECT_NO_THROW(check_progress_fits_run(p, 5, 3, "f"));
  EXPECT_THAT(error_of([&] { check_progress_fits_run(p, 5, 0, "f"); }), HasSubstr("--epochs 0"));
  p.epoch = 99;
  EXPECT_THAT(error_of([&] { check_progress_fits_run(p, 5, 3, "f"); }), HasSubstr("epoch 100"));
  p = valid_progress();
  p.batch_in_epoch = 1000000000000000;  // once made --resume spin skipping batches
  EXPECT_THAT(error_of([&] { check_progress_fits_run(p, 5, 3, "f"); }), HasSubstr("beyond the 5 batches"));
  p = valid_progress();
  p.step = 8;
  EXPECT_THAT(error_of([&] { check_progress_fits_run(p, 5, 3, "f"); }), HasSubstr("does not match"));
}

TEST(CheckpointValidation, AFlippedDataByteIsDetected) {
  const std::string dir = fresh_dir();
  const std::string path = dir + "/last.safetensors";
  Saved s;
  save_training_checkpoint(path, s.model, {&s.adam}, valid_progress());
  std::string bytes = test_data::read_file_bytes(path);
  bytes[bytes.size() - 3] ^= 0x10;  // inside the last tensor's data
  write(dir, "last.safetensors", bytes);
  Saved t;
  EXPECT_THAT(error_of([&] { load_training_checkpoint(path, t.model, {&t.adam}); }),
              HasSubstr("does not match its checksum"));
  // Plain weights (best.safetensors) carry one too.
  save_model_weights(dir + "/best.safetensors", s.model.named_state());
  EXPECT_NO_THROW(load_model_weights(dir + "/best.safetensors"));
  bytes = test_data::read_file_bytes(dir + "/best.safetensors");
  bytes[bytes.size() - 1] ^= 0x01;
  write(dir, "best.safetensors", bytes);
  EXPECT_THAT(error_of([&] { load_model_weights(dir + "/best.safetensors"); }), HasSubstr("checksum"));
}

TEST(CheckpointValidation, EveryFlippedByteOfTheLastTensorIsDetected) {
  // The checksum reads data in 32-byte blocks of four 64-bit words, the last
  // bytes of a tensor one by one: a flip in any of them is caught.
  const std::string dir = fresh_dir();
  Saved s;
  save_model_weights(dir + "/best.safetensors", s.model.named_state());
  const std::string clean = test_data::read_file_bytes(dir + "/best.safetensors");
  for (size_t back = 1; back <= 40; ++back) {
    std::string bytes = clean;
    bytes[bytes.size() - back] ^= 0x80;
    write(dir, "best.safetensors", bytes);
    EXPECT_THAT(error_of([&] { load_model_weights(dir + "/best.safetensors"); }), HasSubstr("checksum"))
        << "byte " << back << " from the end";
  }
}

// FNV-1a byte by byte over each tensor's name (with its NUL), dtype (int),
// shape (int64 each) and data, in name order: the checksum files written
// before 2026-11-28 carry under data_checksum.
uint64_t legacy_fnv1a(const NamedTensors& state) {
  std::map<std::string, Tensor> sorted(state.begin(), state.end());
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](const void* data, size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  };
  for (const auto& [name, t] : sorted) {
    mix(name.data(), name.size() + 1);
    const int dtype = static_cast<int>(t.dtype());
    mix(&dtype, sizeof dtype);
    for (int64_t d : t.shape()) mix(&d, sizeof d);
    mix(t.raw_data(), static_cast<size_t>(t.numel()) * dtype_size(t.dtype()));
  }
  return h;
}

TEST(CheckpointValidation, FilesWithTheEarlierChecksumStillLoadAndAreStillVerified) {
  const std::string dir = fresh_dir(), path = dir + "/best.safetensors";
  Saved s;
  const NamedTensors state = s.model.named_state();
  save_safetensors(path, {state.begin(), state.end()}, {{"data_checksum", std::to_string(legacy_fnv1a(state))}});
  EXPECT_EQ(load_model_weights(path).size(), state.size());
  std::string bytes = test_data::read_file_bytes(path);
  bytes[bytes.size() - 5] ^= 0x01;
  write(dir, "best.safetensors", bytes);
  EXPECT_THAT(error_of([&] { load_model_weights(path); }), HasSubstr("does not match its checksum"));
}

// ---------- command-line flags ----------

std::string usage_error(const std::vector<std::string>& args) {
  try {
    run_train_command(args);
  } catch (const UsageError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("(not a usage error) ") + e.what();
  }
  return "(no error)";
}

TEST(CheckpointValidation, EveryNumericFlagIsRangeChecked) {
  const std::string dir = fresh_dir();
  const std::vector<std::vector<std::string>> bad = {
      {"--lr", "nan"},  {"--lr", "-1"},           {"--clip", "-1"},         {"--weight-decay", "nan"},
      {"--checkpoint-every", "-1"}, {"--eval-every", "-1"}, {"--rl-warmup", "-5"}, {"--head-hidden", "0"},
      {"--seed", "18446744073709551616"}, {"--seed", "-1"}, {"--keep-prob", "2"}, {"--keep-prob", "0"},
      {"--epochs", "99999999999999999999999"}, {"--epochs", "0"}, {"--batch", "0"}, {"--lr", "inf"},
      {"--config", dir}, {"--hidden", "5x"}};
  for (const auto& flag : bad) {
    std::vector<std::string> args = {"--data", dir + "/none", "--run", dir + "/run"};
    args.insert(args.end(), flag.begin(), flag.end());
    const std::string msg = usage_error(args);
    EXPECT_THAT(msg, HasSubstr("--" + flag[0].substr(2))) << flag[0] << " " << flag[1] << ": " << msg;
    EXPECT_THAT(msg, ::testing::Not(HasSubstr("(no error)")));
    EXPECT_THAT(msg, ::testing::Not(HasSubstr("not a usage error"))) << flag[0] << " " << flag[1];
  }
  EXPECT_FALSE(std::filesystem::exists(dir + "/run"));  // nothing written
}

// ---------- run folders ----------

TrainOptions tiny_run(const std::string& dir) {
  test_data::write_marker_data(dir, 48, 16, 16, 3);
  TrainOptions o;
  o.data.data = dir + "/data";
  o.data.format = "tsv";
  o.data.verbose = false;
  o.run_dir = dir + "/run";
  o.model = Saved::config();
  o.min_count = 1;
  o.batch_size = 16;
  o.epochs = 2;
  o.lr = 0.01;
  o.verbose = false;
  return o;
}

TEST(CheckpointValidation, AnExistingRunIsNeverTouchedWithoutResumeOrOverwrite) {
  const std::string dir = fresh_dir();
  TrainOptions o = tiny_run(dir);
  train_model(o);
  const std::string cfg = test_data::read_file_bytes(o.run_dir + "/model.cfg"), metrics = test_data::read_file_bytes(o.run_dir + "/metrics.jsonl");
  const std::string best = test_data::read_file_bytes(o.run_dir + "/best.safetensors");
  EXPECT_THAT(error_of([&] { train_model(o); }), HasSubstr("already holds a run"));
  // A failed start with --overwrite (an invalid model) writes nothing either.
  TrainOptions broken = o;
  broken.overwrite = true;
  broken.model.set("hidden", "5");  // bow has no hidden
  EXPECT_THAT(error_of([&] { train_model(broken); }), HasSubstr("hidden"));
  EXPECT_EQ(test_data::read_file_bytes(o.run_dir + "/model.cfg"), cfg);
  EXPECT_EQ(test_data::read_file_bytes(o.run_dir + "/metrics.jsonl"), metrics);
  EXPECT_EQ(test_data::read_file_bytes(o.run_dir + "/best.safetensors"), best);
  // --overwrite replaces it: a fresh metrics log, not appended to.
  TrainOptions again = o;
  again.overwrite = true;
  train_model(again);
  EXPECT_EQ(test_data::read_file_bytes(o.run_dir + "/metrics.jsonl"), metrics);  // the same seed: the same two lines, not four
}

TEST(CheckpointValidation, ResumeRefusesChangedSettingsAndListsThem) {
  const std::string dir = fresh_dir();
  TrainOptions o = tiny_run(dir);
  o.max_steps = 2;
  train_model(o);
  TrainOptions changed = o;
  changed.resume = true;
  changed.batch_size = 8;
  changed.optimizer = "sgd";
  changed.model.set("embedding_dim", "6");
  const std::string msg = error_of([&] { train_model(changed); });
  EXPECT_THAT(msg, HasSubstr("--batch: the run has '16', now '8'"));
  EXPECT_THAT(msg, HasSubstr("--optimizer: the run has 'adam', now 'sgd'"));
  EXPECT_THAT(msg, HasSubstr("model embedding_dim: the run has '4', now '6'"));
  TrainOptions safe = o;  // more epochs and other evaluation intervals are fine
  safe.resume = true;
  safe.max_steps = 0;
  safe.epochs = 3;
  safe.eval_every = 1;
  TrainResult r = train_model(safe);
  EXPECT_EQ(r.steps, 9);
}

TEST(CheckpointValidation, ResumeAfterAKillDropsLaterMetricsAndStaleTemporaries) {
  const std::string dir = fresh_dir();
  TrainOptions o = tiny_run(dir);
  o.eval_every = 1;
  o.checkpoint_every = 2;
  o.max_steps = 3;  // the last checkpoint is at step 2 (then the final one at 3)
  train_model(o);
  // Pretend the process was killed after step 3's metrics line but before
  // its checkpoint: restore a step-2 checkpoint and leave a torn line and a
  // temporary file of a dead writer behind.
  TrainOptions two = tiny_run(dir + "/other");
  two.eval_every = 1;
  two.max_steps = 2;
  train_model(two);
  std::filesystem::copy_file(two.run_dir + "/last.safetensors", o.run_dir + "/last.safetensors",
                             std::filesystem::copy_options::overwrite_existing);
  append_line(o.run_dir + "/metrics.jsonl", "{\"step\": 3, \"accur");
  const std::string stale = o.run_dir + "/last.safetensors.tmp.999999999";
  write(o.run_dir, "last.safetensors.tmp.999999999", "partial");
  // A temporary of another live process (our parent): not ours to remove,
  // and not the name this process's own writer uses.
  const std::string live = o.run_dir + "/best.safetensors.tmp." + std::to_string(::getppid());
  write(o.run_dir, "best.safetensors.tmp." + std::to_string(::getppid()), "being written");
  TrainOptions resume = o;
  resume.resume = true;
  resume.max_steps = 4;
  train_model(resume);
  std::ifstream in(o.run_dir + "/metrics.jsonl");
  std::vector<double> steps;
  double previous_loss = 0;
  for (std::string line; std::getline(in, line);) {
    Json j = Json::parse(line);
    steps.push_back(j.find("step")->as_number());
    previous_loss = j.find("train_loss")->as_number();
  }
  EXPECT_EQ(steps, (std::vector<double>{1, 2, 3, 4}));
  EXPECT_GT(previous_loss, 0.0);
  EXPECT_FALSE(path_exists(stale));
  EXPECT_TRUE(path_exists(live));  // this process is alive: not removed
}

TEST(CheckpointValidation, TrainLossMeanSurvivesResume) {
  const std::string dir = fresh_dir();
  TrainOptions full = tiny_run(dir);
  full.eval_every = 3;  // the line at step 3 averages steps 1-3 (3 batches per epoch)
  full.run_dir = dir + "/full";
  train_model(full);
  TrainOptions first = tiny_run(dir);
  first.eval_every = 3;
  first.run_dir = dir + "/split";
  first.max_steps = 2;
  train_model(first);
  TrainOptions second = first;
  second.resume = true;
  second.max_steps = 0;
  train_model(second);
  auto line_at = [](const std::string& run, double step) {
    std::ifstream in(run + "/metrics.jsonl");
    for (std::string line; std::getline(in, line);) {
      Json j = Json::parse(line);
      if (j.find("step")->as_number() == step) return j.find("train_loss")->as_number();
    }
    return -1.0;
  };
  EXPECT_EQ(line_at(first.run_dir, 3), line_at(full.run_dir, 3));
}

}  // namespace
}  // namespace attn
