// steps.jsonl (train/step_log.h): a line at every --log-every-th step with
// each field of its type and finite; none with --log-every 0; a run stopped
// and resumed (Ctrl-C, or killed after it logged steps its checkpoint does
// not cover, one line torn) ends with one line per logged step, in order,
// and the same training values as an uninterrupted run.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <csignal>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "attn/engine/error.h"
#include "attn/models/masks.h"
#include "attn/train/interrupt.h"
#include "attn/train/step_log.h"
#include "attn/train/trainer.h"
#include "attn/util/json.h"
#include "test_data_util.h"

namespace attn {
namespace {

using namespace test_data;

// 90 training lines, 9 of them carved off for dev: 81 examples, 3 steps of
// 27 an epoch.
TrainOptions tiny_run(const std::string& dir) {
  TrainOptions o;
  o.data.data = write_alpha_beta_tsv(dir);
  o.data.verbose = false;
  o.run_dir = dir + "/run";
  o.model.set("encoder", "mtsa");
  o.model.set("embedding_dim", "8");
  o.model.set("hidden", "8");
  o.model.set("head_hidden", "8");
  o.model.set("keep_prob", "0.9");
  o.min_count = 1;
  o.batch_size = 27;
  o.epochs = 4;
  o.lr = 0.004;
  o.verbose = false;
  return o;
}

std::vector<Json> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<Json> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(Json::parse(line));
  return lines;
}

std::vector<int64_t> steps_of(const std::vector<Json>& lines) {
  std::vector<int64_t> steps;
  for (const Json& line : lines) steps.push_back(static_cast<int64_t>(line.find("step")->as_number()));
  return steps;
}

bool is_integer(const Json* v) { return v && v->is_number() && v->as_number() == std::floor(v->as_number()); }

TEST(StepLog, LinesAtTheStatedStepsWithEveryFieldFinite) {
  const std::string dir = fresh_dir();
  TrainOptions o = tiny_run(dir);
  o.max_steps = 10;
  o.log_every = 3;
  train_model(o);
  const std::vector<Json> lines = lines_of(o.run_dir + "/steps.jsonl");
  EXPECT_EQ(steps_of(lines), (std::vector<int64_t>{3, 6, 9}));
  const std::vector<int64_t> epochs = {1, 2, 3};  // 3 steps an epoch
  for (size_t i = 0; i < lines.size(); ++i) {
    const Json& line = lines[i];
    SCOPED_TRACE("line " + std::to_string(i + 1));
    ASSERT_TRUE(line.is_object());
    EXPECT_EQ(line.as_object().size(), 10u) << "the fields of train/step_log.h, no more";
    for (const char* key : {"step", "epoch", "allocator_bytes"}) EXPECT_TRUE(is_integer(line.find(key))) << key;
    EXPECT_EQ(line.find("epoch")->as_number(), static_cast<double>(epochs[i]));
    ASSERT_NE(line.find("clipped"), nullptr);
    EXPECT_TRUE(line.find("clipped")->is_bool());
    for (const char* key : {"loss", "mean_loss", "grad_norm", "lr", "examples_per_s", "tokens_per_s"}) {
      const Json* v = line.find(key);
      ASSERT_TRUE(v && v->is_number()) << key << " is missing or not a number (null: not finite)";
      EXPECT_TRUE(std::isfinite(v->as_number())) << key;
      EXPECT_GT(v->as_number(), 0) << key;
    }
    EXPECT_GT(line.find("allocator_bytes")->as_number(), 0) << "the model's weights are allocated";
    EXPECT_DOUBLE_EQ(line.find("lr")->as_number(), 0.004);
    // Each example has 6 tokens ("alpha" or "beta" and 5 fillers), no padding.
    EXPECT_NEAR(line.find("tokens_per_s")->as_number() / line.find("examples_per_s")->as_number(), 6.0, 1e-4);
    // A loss of two balanced classes starts near ln 2 and is a cross-entropy: positive, not huge.
    EXPECT_LT(line.find("loss")->as_number(), 5.0);
  }
}

TEST(StepLog, ClippedSaysWhetherTheNormExceededTheLimit) {
  const std::string dir = fresh_dir();
  TrainOptions o = tiny_run(dir);
  o.max_steps = 4;
  o.log_every = 1;
  o.clip_norm = 1e-9;  // every gradient norm is above it
  train_model(o);
  const std::vector<Json> lines = lines_of(o.run_dir + "/steps.jsonl");
  ASSERT_EQ(steps_of(lines), (std::vector<int64_t>{1, 2, 3, 4}));
  for (const Json& line : lines) {
    EXPECT_TRUE(line.find("clipped")->as_bool());
    EXPECT_GT(line.find("grad_norm")->as_number(), 1e-9) << "the norm before clipping, not after";
  }
}

TEST(StepLog, LogEveryZeroWritesNoStepLog) {
  const std::string dir = fresh_dir();
  TrainOptions o = tiny_run(dir);
  o.max_steps = 4;
  o.log_every = 0;
  train_model(o);
  EXPECT_TRUE(std::filesystem::exists(o.run_dir + "/metrics.jsonl"));
  EXPECT_FALSE(std::filesystem::exists(o.run_dir + "/steps.jsonl"));
  o.log_every = -1;
  o.resume = true;
  EXPECT_THAT(error_of([&] { train_model(o); }), testing::HasSubstr("--log-every must be 0 (no step log) or positive"));
}

TEST(StepLog, LineAndTokens) {
  StepLine line;
  line.step = 12;
  line.epoch = 2;
  line.loss = 0.5;
  line.mean_loss = 0.25;
  line.grad_norm = 3;
  line.clipped = true;
  line.lr = 0.001;
  line.examples_per_s = std::nan("");  // no time measured: null
  line.tokens_per_s = 1e6;
  line.allocator_bytes = 123456789012;
  EXPECT_EQ(step_line_json(line),
            "{\"step\":12,\"epoch\":2,\"loss\":0.5,\"mean_loss\":0.25,\"grad_norm\":3,\"clipped\":true,"
            "\"lr\":0.001,\"examples_per_s\":null,\"tokens_per_s\":1e+06,\"allocator_bytes\":123456789012}");
  Batch batch;
  batch.mask = length_mask({3, 1}, 4);
  EXPECT_EQ(tokens_in(batch), 4);
  batch.mask_b = length_mask({2, 1}, 3);  // a pair's second sentences count too
  EXPECT_EQ(tokens_in(batch), 7);
}

// The values a resumed run must reproduce (the rates and allocator bytes are
// the process's own): step, epoch, clipped exactly; the losses, norm and lr
// to the 6 significant digits the file holds (each rounded by at most half a
// unit in the 6th digit: 1e-5 relative covers two of them) plus float32
// summation-order noise of a few ulps (1e-6) carried through a few steps.
void expect_same_training(const std::vector<Json>& resumed, const std::vector<Json>& reference) {
  ASSERT_EQ(steps_of(resumed), steps_of(reference));
  for (size_t i = 0; i < reference.size(); ++i) {
    SCOPED_TRACE("step " + std::to_string(steps_of(reference)[i]));
    EXPECT_EQ(resumed[i].find("epoch")->as_number(), reference[i].find("epoch")->as_number());
    EXPECT_EQ(resumed[i].find("clipped")->as_bool(), reference[i].find("clipped")->as_bool());
    for (const char* key : {"loss", "mean_loss", "grad_norm", "lr"}) {
      const double want = reference[i].find(key)->as_number();
      EXPECT_NEAR(resumed[i].find(key)->as_number(), want, 1e-4 * std::fabs(want)) << key;
    }
  }
}

TEST(StepLog, ResumedRunsHaveEachLoggedStepOnce) {
  const std::string dir = fresh_dir();
  TrainOptions reference_run = tiny_run(dir + "/reference");
  reference_run.log_every = 2;
  train_model(reference_run);
  const std::vector<Json> reference = lines_of(reference_run.run_dir + "/steps.jsonl");
  ASSERT_EQ(steps_of(reference), (std::vector<int64_t>{2, 4, 6, 8, 10, 12}));

  // Ctrl-C: the loop stops after the step it lands in (step 1), saving a
  // checkpoint there; the resumed run logs from step 2 on.
  TrainOptions o = tiny_run(dir + "/stopped");
  o.log_every = 1;
  install_interrupt_handler();
  std::raise(SIGINT);
  ASSERT_TRUE(train_model(o).interrupted);
  clear_interrupt();
  EXPECT_EQ(steps_of(lines_of(o.run_dir + "/steps.jsonl")), (std::vector<int64_t>{1}));

  // A run killed after logging steps its checkpoint does not cover: trained
  // to step 5 (checkpoint there), on to step 8 (its lines written), then the
  // step-5 checkpoint put back and a torn line appended, as a process killed
  // mid-write between two checkpoints leaves them.
  o.resume = true;
  o.log_every = 2;
  o.max_steps = 5;
  train_model(o);
  const std::string checkpoint_5 = dir + "/last_at_5.safetensors";
  std::filesystem::copy_file(o.run_dir + "/last.safetensors", checkpoint_5);
  o.max_steps = 8;
  train_model(o);
  EXPECT_EQ(steps_of(lines_of(o.run_dir + "/steps.jsonl")), (std::vector<int64_t>{1, 2, 4, 6, 8}));
  std::filesystem::copy_file(checkpoint_5, o.run_dir + "/last.safetensors",
                             std::filesystem::copy_options::overwrite_existing);
  {
    std::ofstream torn(o.run_dir + "/steps.jsonl", std::ios::app);
    torn << "{\"step\":10,\"epoch\":4,\"lo";
  }

  o.max_steps = 0;
  train_model(o);
  std::vector<Json> lines = lines_of(o.run_dir + "/steps.jsonl");
  // Step 1 is the interrupted process's line (--log-every 1 then); from step
  // 2 on, one line per second step, the ones after step 5 logged again.
  EXPECT_EQ(steps_of(lines), (std::vector<int64_t>{1, 2, 4, 6, 8, 10, 12}));
  lines.erase(lines.begin());
  expect_same_training(lines, reference);
}

}  // namespace
}  // namespace attn
