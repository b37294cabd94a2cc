// What every training run guarantees about its folder: one writer at a time
// (RunFolderLock), a dev evaluation at the end of every epoch and of the run
// whatever --eval-every is, a run interrupted mid-step that resumes to the
// uninterrupted run's files, and a best checkpoint even when no dev score is
// finite. (scripts/check_resume_phases.sh checks the other phases a signal
// can land in, and the lock between two real processes.)
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <regex>

#include "attn/nn/safetensors.h"
#include "attn/train/interrupt.h"
#include "attn/train/run/run_lock.h"
#include "attn/train/trainer.h"
#include "test_data_util.h"

namespace attn {
namespace {

using namespace test_data;

// ---------- RunFolderLock ----------

TEST(RunFolderLock, SecondLockOfTheFolderIsRefusedNamingTheHolder) {
  const std::string dir = fresh_dir() + "/run";
  const RunFolderLock first(dir);
  EXPECT_EQ(test_data::read_file_bytes(RunFolderLock::path_in(dir)), std::to_string(::getpid()) + "\n");
  // flock belongs to the open file description: a second open in this very
  // process conflicts just as another process would.
  const std::string err = error_of([&] { RunFolderLock second(dir); });
  EXPECT_THAT(err, HasSubstr("'" + dir + "' is in use by another attn train (process " +
                             std::to_string(::getpid()) + ")"));
}

TEST(RunFolderLock, ReleasedWhenItsHolderEnds) {
  const std::string dir = fresh_dir() + "/run";
  { const RunFolderLock first(dir); write(dir, "model.cfg", "encoder = mtsa\n"); }
  EXPECT_EQ(error_of([&] { RunFolderLock again(dir); }), "(no error)");
}

TEST(RunFolderLock, AFolderItCreatedAndNothingWroteToIsRemoved) {
  const std::string dir = fresh_dir() + "/run";
  { const RunFolderLock lock(dir); }
  EXPECT_FALSE(std::filesystem::exists(dir));  // a failed start leaves no trace
  std::filesystem::create_directories(dir);
  { const RunFolderLock lock(dir); }
  EXPECT_TRUE(std::filesystem::exists(dir));  // a folder the user made stays
}

// ---------- dev evaluations and the best checkpoint ----------

Config tiny_model() {
  Config c;
  c.set("encoder", "mtsa");
  c.set("embedding_dim", "8");
  c.set("hidden", "8");
  c.set("head_hidden", "8");
  return c;
}

TrainOptions tiny_run(const std::string& data, const std::string& run_dir) {
  TrainOptions o;
  o.data.data = data;
  o.data.verbose = false;
  o.run_dir = run_dir;
  o.model = tiny_model();
  o.batch_size = 9;  // 81 train examples: 9 steps per epoch
  o.epochs = 2;
  o.verbose = false;
  return o;
}

std::vector<int> evaluated_steps(const std::string& metrics) {
  std::vector<int> steps;
  std::ifstream in(metrics);
  const std::regex step("\"step\": *([0-9]+)");
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_search(line, m, step)) steps.push_back(std::stoi(m[1]));
  }
  return steps;
}

TEST(TrainerEvaluation, EveryEpochEndAndTheRunEndAreEvaluatedOnce) {
  const std::string dir = fresh_dir();
  TrainOptions o = tiny_run(test_data::write_alpha_beta_tsv(dir), dir + "/run");
  o.eval_every = 4;  // does not divide the 9 steps of an epoch
  train_model(o);
  EXPECT_EQ(evaluated_steps(o.run_dir + "/metrics.jsonl"), (std::vector<int>{4, 8, 9, 12, 16, 18}));

  o.run_dir = dir + "/divides";
  o.eval_every = 3;  // every epoch end is an --eval-every step: none twice
  train_model(o);
  EXPECT_EQ(evaluated_steps(o.run_dir + "/metrics.jsonl"), (std::vector<int>{3, 6, 9, 12, 15, 18}));

  o.run_dir = dir + "/max_steps";
  o.eval_every = 5;
  o.max_steps = 13;  // the run ends mid-epoch, between two --eval-every steps
  train_model(o);
  EXPECT_EQ(evaluated_steps(o.run_dir + "/metrics.jsonl"), (std::vector<int>{5, 9, 10, 13}));
}

TEST(TrainerData, AnEmptySplitIsNamedWithItsCause) {
  const std::string dir = fresh_dir();
  write(dir, "data/train.tsv", "1\tgood film\n");  // one example: no dev split to carve from it
  write(dir, "data/test.tsv", "1\tgood film\n0\tbad film\n");
  std::string err = error_of([&] { train_model(tiny_run(dir + "/data", dir + "/run")); });
  EXPECT_THAT(err, HasSubstr("the dev split of '" + dir + "/data'"));
  EXPECT_THAT(err, HasSubstr("the 1 training example(s) are too few to carve one from"));
  write(dir, "data/train.tsv", "1\tgood film\n0\tbad film\n1\tfine film\n0\tdull film\n");
  write(dir, "data/dev.tsv", "1\tgood film\n0\tbad film\n");
  write(dir, "data/test.tsv", "");
  err = error_of([&] { train_model(tiny_run(dir + "/data", dir + "/run")); });
  EXPECT_THAT(err, HasSubstr("the test split of '" + dir + "/data'"));
  EXPECT_THAT(err, HasSubstr("is empty: its file has no example lines"));
}

TEST(TrainerResume, InterruptedMidStepResumesToTheUninterruptedRunsFiles) {
  const std::string dir = fresh_dir();
  TrainOptions o = tiny_run(test_data::write_alpha_beta_tsv(dir), dir + "/reference");
  o.eval_every = 4;
  o.checkpoint_every = 2;
  train_model(o);

  o.run_dir = dir + "/interrupted";
  install_interrupt_handler();
  std::raise(SIGINT);  // Ctrl-C during step 1: the loop stops after it
  const TrainResult first = train_model(o);
  clear_interrupt();
  ASSERT_TRUE(first.interrupted);
  o.resume = true;
  train_model(o);
  for (const char* file : {"best.safetensors", "last.safetensors", "metrics.jsonl"})
    EXPECT_EQ(test_data::read_file_bytes(dir + "/interrupted/" + file), test_data::read_file_bytes(dir + "/reference/" + file)) << file;
}

// SICK-like pairs whose dev pairs are all the same sentences: the model's dev
// predictions are constant, so the dev Pearson r is never finite.
std::string write_constant_dev_sick(const std::string& dir) {
  const std::string header = "pair_ID\tsentence_A\tsentence_B\trelatedness_score\n";
  const char* words[] = {"a", "man", "cat", "sings", "runs", "dog", "the", "plays"};
  std::string train = header, dev = header, test = header;
  for (int i = 0; i < 40; ++i) {
    const std::string a = std::string(words[i % 8]) + " " + words[(i * 3 + 1) % 8];
    const std::string b = std::string(words[(i * 5 + 2) % 8]) + " " + words[(i + 4) % 8];
    const std::string score = std::to_string(1 + i % 5);
    train += std::to_string(i) + "\t" + a + "\t" + b + "\t" + score + "\n";
    if (i < 10) dev += std::to_string(i) + "\ta man sings\tthe dog runs\t" + score + "\n";
    if (i < 10) test += std::to_string(i) + "\t" + b + "\t" + a + "\t" + score + "\n";
  }
  write(dir, "sick/train.txt", train);
  write(dir, "sick/dev.txt", dev);
  write(dir, "sick/test.txt", test);
  return dir + "/sick";
}

TEST(TrainerEvaluation, NoFiniteDevScoreStillLeavesABestCheckpointAndSaysWhich) {
  const std::string dir = fresh_dir();
  TrainOptions o = tiny_run(write_constant_dev_sick(dir), dir + "/run");
  o.data.task = TaskKind::Relatedness;
  o.data.format = "sick";
  o.batch_size = 8;  // 5 steps per epoch
  testing::internal::CaptureStderr();
  const TrainResult r = train_model(o);
  const std::string log = testing::internal::GetCapturedStderr();
  EXPECT_EQ(r.primary, "pearson");
  EXPECT_FALSE(std::isfinite(r.best_dev));
  ASSERT_TRUE(std::filesystem::exists(o.run_dir + "/best.safetensors"));
  std::map<std::string, std::string> meta;
  load_safetensors(o.run_dir + "/best.safetensors", &meta);
  EXPECT_EQ(meta.at("step"), "10");  // the latest evaluated weights
  EXPECT_THAT(log, HasSubstr("no finite dev pearson; best.safetensors holds the weights of step 10"));
  EXPECT_TRUE(std::isfinite(r.test.metrics.at("mse")));  // tested with those weights
}

}  // namespace
}  // namespace attn
