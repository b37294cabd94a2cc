// The training stack end to end on small generated problems: relatedness
// (SICK format) learns, ReSAN's REINFORCE schedule makes the RSS select
// fewer tokens while accuracy stays high, the same seed gives the same run,
// a resumed run ends exactly where an uninterrupted one does, and
// `attn eval` / `attn predict` agree with the trainer.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <sstream>

#include <unistd.h>

#include "attn/engine/autograd.h"
#include "attn/models/resan.h"
#include "attn/nn/safetensors.h"
#include "attn/ops/reduce/reduce.h"
#include "test_data_util.h"
#include "attn/train/cli/commands.h"
#include "attn/util/json.h"
#include "attn/train/checkpoint.h"
#include "attn/train/run/saved_run.h"
#include "attn/train/trainer.h"

namespace attn {
namespace {

using namespace test_data;


// Relatedness = 1 + the number of marker words the two sentences share
// (0..4, drawn uniformly), each sentence padded with fillers to 7 words.
std::string sick_file(std::mt19937& rng, int rows) {
  const std::vector<std::string> markers = {"m0", "m1", "m2", "m3", "m4", "m5", "m6", "m7"};
  std::string text = "pair_ID\tsentence_A\tsentence_B\trelatedness_score\tentailment_judgment\n";
  for (int r = 0; r < rows; ++r) {
    std::vector<std::string> order = markers;
    std::shuffle(order.begin(), order.end(), rng);
    int shared = static_cast<int>(rng() % 5);
    std::vector<std::string> a(order.begin(), order.begin() + shared), b = a;
    // Markers only one side has: they must not count.
    for (int i = shared; i < 8; ++i) {
      int where = static_cast<int>(rng() % 3);
      if (where == 0 && a.size() < 6) a.push_back(order[i]);
      if (where == 1 && b.size() < 6) b.push_back(order[i]);
    }
    for (auto* s : {&a, &b}) {
      while (s->size() < 7) s->push_back(filler_words()[rng() % filler_words().size()]);
      std::shuffle(s->begin(), s->end(), rng);
    }
    text += std::to_string(r + 1) + "\t" + join_words(a) + "\t" + join_words(b) + "\t" +
            std::to_string(1 + shared) + "\tNEUTRAL\n";
  }
  return text;
}

std::string write_sick_data(const std::string& dir) {
  std::mt19937 rng(7);
  write(dir, "data/train.txt", sick_file(rng, 400));
  write(dir, "data/dev.txt", sick_file(rng, 100));
  write(dir, "data/test.txt", sick_file(rng, 150));
  return dir + "/data";
}

std::string write_marker_data(const std::string& dir, int train_rows = 600) {
  return test_data::write_marker_data(dir, train_rows, 100, 200);
}

TrainOptions tiny_options(const std::string& data, const std::string& run_dir, const std::string& encoder) {
  TrainOptions o;
  o.data.data = data;
  o.data.format = "tsv";
  o.data.verbose = false;
  o.run_dir = run_dir;
  o.model.set("encoder", encoder);
  o.model.set("embedding_dim", "12");
  o.model.set("head_hidden", "12");
  if (encoder != "bow") o.model.set("hidden", "12");
  o.min_count = 1;
  o.batch_size = 32;
  o.epochs = 2;
  o.lr = 0.01;
  o.verbose = false;
  return o;
}

std::vector<Json> metrics_lines(const std::string& run_dir) {
  std::ifstream in(run_dir + "/metrics.jsonl");
  std::vector<Json> out;
  for (std::string line; std::getline(in, line);) out.push_back(Json::parse(line));
  return out;
}

// The model state inside a resumable checkpoint ("model.<name>" tensors).
std::map<std::string, Tensor> model_state_of_checkpoint(const std::string& path) {
  std::map<std::string, Tensor> out;
  for (auto& [name, t] : load_safetensors(path))
    if (name.rfind("model.", 0) == 0) out.emplace(name.substr(6), t);
  return out;
}

void expect_same_tensors(const std::map<std::string, Tensor>& a, const std::map<std::string, Tensor>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [name, t] : a) {
    ASSERT_TRUE(b.count(name)) << name;
    EXPECT_EQ(t.to_vector(), b.at(name).to_vector()) << name << " differs";
  }
}

// ---------- 1. Relatedness: the KL loss falls and Pearson is high ----------

TEST(TrainingLoop, RelatednessLowersKlLossAndReachesHighPearson) {
  const std::string dir = fresh_dir();
  TrainOptions o = tiny_options(write_sick_data(dir), dir + "/run", "bow");
  o.data.task = TaskKind::Relatedness;
  o.data.format = "sick";
  o.model.set("embedding_dim", "16");
  o.model.set("head_hidden", "16");
  o.model.set("keep_prob", "1.0");
  o.epochs = 25;
  o.batch_size = 25;
  o.lr = 0.02;
  TrainResult r = train_model(o);

  // The dev KL of the model the trainer started from: the same config,
  // vocabulary and seeds rebuild its initial weights exactly.
  Dataset data = load_task_data(o.data);
  Vocabulary vocab = Vocabulary::load(o.run_dir + "/vocab.txt");
  Generator init(o.seed), noise(o.seed + 1);
  TaskModel initial(Config::load(o.run_dir + "/model.cfg"), TaskKind::Relatedness, vocab.size(), 5, DType::F32, init,
                    noise);
  EvalOptions eo;
  eo.batch_size = o.batch_size;
  double start_loss = evaluate(initial, data.dev, vocab, data.label_names, eo).metrics.at("loss");

  std::vector<Json> lines = metrics_lines(o.run_dir);
  ASSERT_EQ(lines.size(), 25u);  // one dev evaluation per epoch
  double end_loss = lines.back().at("loss").as_number();
  std::printf("relatedness: dev KL %.4f -> %.4f (after epoch 1 %.4f); test pearson %.4f, spearman %.4f, mse %.4f\n",
              start_loss, end_loss, lines.front().at("loss").as_number(), r.test.metrics.at("pearson"),
              r.test.metrics.at("spearman"), r.test.metrics.at("mse"));
  // The training objective falls steadily; the dev KL falls too until the
  // small model starts to overfit 400 pairs, so its best epoch is checked.
  double first_train = lines.front().at("train_loss").as_number();
  double last_train = lines.back().at("train_loss").as_number();
  double best_dev = start_loss;
  for (const Json& line : lines) best_dev = std::min(best_dev, line.at("loss").as_number());
  std::printf("relatedness: train KL %.4f -> %.4f, best dev KL %.4f\n", first_train, last_train, best_dev);
  EXPECT_LT(last_train, 0.1 * first_train);
  EXPECT_LT(best_dev, 0.8 * start_loss);
  EXPECT_EQ(r.primary, "pearson");
  EXPECT_GT(r.test.metrics.at("pearson"), 0.8);
  EXPECT_EQ(r.steps, 25 * 16);
}

// ---------- 2. REINFORCE: fewer tokens selected, accuracy kept ----------

struct SelectionStats {
  double accuracy = 0, selected_fraction = 0;
  double marker_selected = 0, filler_selected = 0;  // how often the head RSS keeps each kind of token
};

// The final weights (last.safetensors) in evaluation mode over the test
// split: accuracy and the mean fraction of tokens the RSS modules select
// (threshold rule, the default rss_eval).
SelectionStats resan_test_selection(const std::string& run_dir, const std::vector<Example>& test) {
  SavedRun run = load_saved_run(run_dir);
  load_into_module(*run.model, model_state_of_checkpoint(run_dir + "/last.safetensors"), true);
  auto& resan = dynamic_cast<Resan&>(run.model->encoder());
  EXPECT_FALSE(resan.select_all());
  NoGrad no_grad;
  run.model->set_training(false);
  BatchOptions bo;
  bo.batch_size = 50;
  bo.shuffle = false;
  BatchIterator it(test, run.vocab, TaskKind::Classify, bo, nullptr);
  Batch batch;
  const int64_t alpha = run.vocab.id("alpha"), beta = run.vocab.id("beta");
  double correct = 0, fraction = 0, markers = 0, markers_kept = 0, fillers = 0, fillers_kept = 0;
  while (it.next(batch)) {
    Tensor best = argmax(run.model->logits(inputs_of(batch)), -1);
    const RssState& sel = resan.last_selection();
    std::vector<double> f = sel.fraction.to_vector();
    for (int64_t i = 0; i < batch.size(); ++i) {
      correct += best.at({i}) == batch.labels.at({i}) ? 1 : 0;
      fraction += f[static_cast<size_t>(i)];
      for (int64_t t = 0; t < batch.ids.size(1); ++t) {
        if (batch.mask.at({i, t}) == 0) continue;
        const int64_t id = static_cast<int64_t>(batch.ids.at({i, t}));
        const double kept = sel.z_head.at({i, t});
        if (id == alpha || id == beta) markers += 1, markers_kept += kept;
        else fillers += 1, fillers_kept += kept;
      }
    }
  }
  double n = static_cast<double>(test.size());
  return {correct / n, fraction / n, markers_kept / markers, fillers_kept / fillers};
}

TEST(TrainingLoop, ReinforceMakesResanSelectFewerTokensAndKeepAccuracy) {
  const std::string dir = fresh_dir();
  TrainOptions o = tiny_options(write_marker_data(dir), dir + "/run", "resan");
  o.model.set("rss_hidden", "8");
  o.model.set("keep_prob", "1.0");
  o.epochs = 8;  // 19 steps per epoch
  o.rl_warmup_steps = 19;
  o.rl_only_steps = 30;
  o.rl_lambda = 1.0;
  o.rl_lr = 0.02;
  o.rl_baseline = true;
  TrainResult r = train_model(o);
  Dataset data = load_task_data(o.data);
  SelectionStats s = resan_test_selection(o.run_dir, data.test);
  std::printf("resan: test accuracy %.4f with %.3f of the tokens selected (markers %.3f, fillers %.3f; "
              "trainer's best-dev test accuracy %.4f)\n",
              s.accuracy, s.selected_fraction, s.marker_selected, s.filler_selected, r.test.metrics.at("accuracy"));
  EXPECT_GT(s.accuracy, 0.9);
  EXPECT_LT(s.selected_fraction, 0.5);
  EXPECT_GT(r.test.metrics.at("accuracy"), 0.9);
}

// ---------- 3. ReSAN's training follows seed 004 Sec. 4 ----------

TEST(TrainingLoop, DefaultsFollowThePapers) {
  const TrainOptions o;
  EXPECT_EQ(o.rl_only_steps, 0);  // theta_r and theta_s together right after the warm-up
  EXPECT_TRUE(o.rl_lambda == 0.005 || o.rl_lambda == 0.01 || o.rl_lambda == 0.02) << o.rl_lambda;
  EXPECT_EQ(o.rl_reward, RewardKind::Probability);  // Eq. 17
  EXPECT_EQ(o.rl_warmup_steps, TrainOptions::kWarmupByDevLoss);
  EXPECT_EQ(o.weight_decay_scope, "all");  // "L2 regularization ... to all the model"
  EXPECT_EQ(o.weight_decay_factor, 1.0);   // gamma ||theta||^2
  EXPECT_EQ(o.min_count, 1);               // every training word gets its own row
}

TEST(TrainingLoop, ResanCheckpointIsTestedWithThePolicyItWasEvaluatedWith) {
  // Every step is warm-up, so every dev evaluation (and the best checkpoint)
  // selects every token; the test figure and `attn eval` must do the same,
  // not threshold with an RSS that was never trained.
  const std::string dir = fresh_dir();
  TrainOptions o = tiny_options(write_marker_data(dir, 200), dir + "/run", "resan");
  o.model.set("rss_hidden", "8");
  o.rl_warmup_steps = 1000;
  TrainResult r = train_model(o);
  std::map<std::string, std::string> meta;
  load_model_weights(o.run_dir + "/best.safetensors", &meta);
  EXPECT_EQ(meta["selection_policy"], "select_all");
  SavedRun run = load_saved_run(o.run_dir);
  EXPECT_TRUE(run.model->encoder().select_all());
  EvalOptions eo;
  eo.batch_size = o.batch_size;
  eo.max_len = o.max_len;
  const EvalResult again = evaluate(*run.model, load_task_data(o.data).test, run.vocab, run.labels, eo);
  EXPECT_EQ(again.metrics, r.test.metrics);

  // After the warm-up the checkpoint records the learned policy.
  TrainOptions joint = o;
  joint.run_dir = dir + "/joint";
  joint.rl_warmup_steps = 2;
  train_model(joint);
  load_model_weights(joint.run_dir + "/best.safetensors", &meta);
  EXPECT_EQ(meta["selection_policy"], "learned");
  EXPECT_FALSE(load_saved_run(joint.run_dir).model->encoder().select_all());
}

TEST(TrainingLoop, ResanDevLossWarmupEndsWhenTheDevLossStopsFalling) {
  const std::string dir = fresh_dir();
  TrainOptions o = tiny_options(write_marker_data(dir, 200), dir + "/run", "resan");
  o.model.set("rss_hidden", "8");
  o.eval_every = 3;  // 7 steps per epoch: evaluations after steps 3, 6, 7 (the epoch's end), 9, 12 and 14
  o.rl_warmup_steps = TrainOptions::kWarmupByDevLoss;
  o.rl_warmup_min_decrease = 0.99;  // no dev loss falls by 99% in 3 steps: over at the second evaluation
  train_model(o);
  const std::vector<Json> lines = metrics_lines(o.run_dir);
  ASSERT_EQ(lines.size(), 6u);
  EXPECT_EQ(lines[0].at("select_all").as_number(), 1);  // after step 3: warm-up
  EXPECT_EQ(lines[1].at("select_all").as_number(), 1);  // after step 6: still the warm-up's steps; it ends here
  EXPECT_EQ(lines[2].at("select_all").as_number(), 0);  // after step 7: joint
  std::map<std::string, std::string> meta;
  load_safetensors(o.run_dir + "/last.safetensors", &meta);
  EXPECT_EQ(meta.at("warmup_end_step"), "6");
}

TEST(TrainingLoop, TaggingLossIsTheMeanOverTokens) {
  // Two sentences of 1 and 3 tokens: the batch loss weighs every token alike.
  Batch batch;
  batch.mask = from_vector({1, 0, 0, 1, 1, 1}, {2, 3}, DType::U8);
  batch.tags = from_vector({0, kIgnoreTag, kIgnoreTag, 1, 1, 1}, {2, 3}, DType::I64);
  Tensor logits = from_vector({2, 0, 0, 0, 0, 0, 0, 1, 0, 3, 0, 0.5}, {2, 3, 2}, DType::F64);
  const std::vector<double> per_token = {std::log(1 + std::exp(-2.0)), std::log(1 + std::exp(-1.0)),
                                         std::log(1 + std::exp(-3.0)), std::log(1 + std::exp(-0.5))};
  const double token_mean = (per_token[0] + per_token[1] + per_token[2] + per_token[3]) / 4;
  EXPECT_NEAR(training_loss(TaskKind::Tag, logits, batch).item(), token_mean, 1e-12);
}

// ---------- 4. Determinism and exact resumption ----------

TEST(TrainingLoop, SameSeedGivesIdenticalRuns) {
  const std::string dir = fresh_dir();
  const std::string data = write_marker_data(dir, 200);
  TrainOptions a = tiny_options(data, dir + "/a", "mtsa");
  a.model.set("keep_prob", "0.8");  // dropout draws from the noise generator
  TrainOptions b = a;
  b.run_dir = dir + "/b";
  TrainResult ra = train_model(a), rb = train_model(b);
  EXPECT_EQ(ra.test.metrics, rb.test.metrics);
  EXPECT_EQ(ra.best_dev, rb.best_dev);
  expect_same_tensors(model_state_of_checkpoint(a.run_dir + "/last.safetensors"),
                      model_state_of_checkpoint(b.run_dir + "/last.safetensors"));
  // A different seed is a different run (so the comparison above can fail).
  TrainOptions c = a;
  c.run_dir = dir + "/c";
  c.seed = 2;
  train_model(c);
  EXPECT_NE(load_safetensors(a.run_dir + "/last.safetensors").at("model.embedding.weight").to_vector(),
            load_safetensors(c.run_dir + "/last.safetensors").at("model.embedding.weight").to_vector());
}

// Trains `full` in one go and in two legs (stopped by max_steps = k, then
// resumed with no cap); both must end with the same weights, optimiser
// state and test metrics.
void expect_resume_matches(TrainOptions full, int64_t k) {
  TrainOptions first = full, second = full;
  first.run_dir = second.run_dir = full.run_dir + "-legs";
  first.max_steps = k;
  TrainResult r1 = train_model(first);
  ASSERT_EQ(r1.steps, k);
  second.resume = true;
  TrainResult resumed = train_model(second);
  TrainResult straight = train_model(full);
  EXPECT_EQ(resumed.steps, straight.steps);
  EXPECT_EQ(resumed.test.metrics, straight.test.metrics);
  EXPECT_EQ(resumed.best_dev, straight.best_dev);
  std::map<std::string, std::string> meta_a, meta_b;
  std::map<std::string, Tensor> a = load_safetensors(first.run_dir + "/last.safetensors", &meta_a);
  std::map<std::string, Tensor> b = load_safetensors(full.run_dir + "/last.safetensors", &meta_b);
  expect_same_tensors(a, b);  // model and optimiser state
  EXPECT_EQ(meta_a, meta_b);  // position, generators, best score, baseline
}

TEST(TrainingLoop, ResumedRunMatchesUninterruptedRunMidEpoch) {
  const std::string dir = fresh_dir();
  TrainOptions o = tiny_options(write_marker_data(dir, 200), dir + "/run", "mtsa");
  o.model.set("keep_prob", "0.8");
  o.epochs = 3;
  o.batch_size = 20;  // 10 steps per epoch
  o.eval_every = 4;   // the stop at step 8 falls on an evaluation, as in the uninterrupted run
  expect_resume_matches(o, 8);
}

TEST(TrainingLoop, ResumedRunMatchesUninterruptedRunAtEpochBoundary) {
  // Stopping exactly at the end of an epoch saves a checkpoint at the start
  // of the next one; the resumed run must shuffle that epoch as the
  // uninterrupted run does (not as epoch 1 again).
  const std::string dir = fresh_dir();
  TrainOptions o = tiny_options(write_marker_data(dir, 200), dir + "/run", "mtsa");
  o.model.set("keep_prob", "0.8");
  o.epochs = 3;
  o.batch_size = 20;  // 10 steps per epoch
  expect_resume_matches(o, 10);
}

TEST(TrainingLoop, ResumedResanRunMatchesUninterruptedRunDuringReinforce) {
  // Stopped in the joint phase: RSS sampling noise and the moving baseline
  // must carry over.
  const std::string dir = fresh_dir();
  TrainOptions o = tiny_options(write_marker_data(dir, 200), dir + "/run", "resan");
  o.model.set("rss_hidden", "8");
  o.epochs = 3;
  o.batch_size = 20;
  o.rl_warmup_steps = 4;
  o.rl_only_steps = 3;
  o.rl_baseline = true;
  o.eval_every = 5;
  expect_resume_matches(o, 15);
}

// ---------- 5. attn eval and attn predict on a finished run ----------

class FinishedRun : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // The process id keeps this suite's tests, which CTest runs as parallel
    // processes, out of each other's folders.
    dir_ = new std::string(::testing::TempDir() + "/attn_training_loop_finished_run_" + std::to_string(::getpid()));
    std::filesystem::remove_all(*dir_);
    TrainOptions o = tiny_options(write_marker_data(*dir_, 300), *dir_ + "/run", "bow");
    o.epochs = 6;
    result_ = new TrainResult(train_model(o));
  }
  static void TearDownTestSuite() {
    std::filesystem::remove_all(*dir_);
    delete dir_;
    delete result_;
  }
  static std::string* dir_;
  static TrainResult* result_;
};
std::string* FinishedRun::dir_ = nullptr;
TrainResult* FinishedRun::result_ = nullptr;

TEST_F(FinishedRun, EvalCommandPrintsTheTrainersTestMetrics) {
  ASSERT_GT(result_->test.metrics.at("accuracy"), 0.9);
  int code = -1;
  // The trainer evaluated with its batch size (32); eval's default is 64.
  for (const char* batch : {"32", "64"}) {
    std::string out = run_command(run_eval_command, {"--run", *dir_ + "/run", "--batch", batch}, "", &code);
    EXPECT_EQ(code, 0);
    Json j = Json::parse(out);
    EXPECT_EQ(j.at("examples").as_number(), 200);
    for (const auto& [name, value] : result_->test.metrics)
      EXPECT_NEAR(j.at("test").at(name).as_number(), value, 1e-5 * std::max(1.0, std::abs(value)))
          << name << " with --batch " << batch;
    EXPECT_EQ(j.at("test").as_object().size(), result_->test.metrics.size());
  }
  std::string out = run_command(run_eval_command, {"--run", *dir_ + "/run", "--batch", "32"}, "", &code);
  EXPECT_THAT(out, HasSubstr("{\"test\": " + metrics_json(result_->test.metrics)));
  // --device cpu is the default, spelled out.
  EXPECT_EQ(run_command(run_eval_command, {"--run", *dir_ + "/run", "--batch", "32", "--device", "cpu"}, "", &code),
            out);
  EXPECT_EQ(code, 0);
  // The dev split gives the best dev score the trainer recorded.
  out = run_command(run_eval_command, {"--run", *dir_ + "/run", "--split", "dev", "--batch", "32"}, "", &code);
  EXPECT_NEAR(Json::parse(out).at("dev").at("accuracy").as_number(), result_->best_dev, 1e-6);
}

TEST_F(FinishedRun, PredictCommandPrintsOneLabelPerInputLine) {
  const std::string input =
      "the cat alpha sat on the mat\n"
      "beta the dog ran\n"
      "\n"
      "a big red car beta on the road\n"
      "alpha\n"
      "green sky sun rain walk fast slow tree house old new alpha the\n";
  int code = -1;
  std::string out = run_command(run_predict_command, {"--run", *dir_ + "/run"}, input, &code);
  EXPECT_EQ(code, 0);
  std::vector<std::string> labels;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) labels.push_back(line);
  ASSERT_EQ(labels.size(), 6u) << out;
  EXPECT_EQ(labels[0], "1");
  EXPECT_EQ(labels[1], "0");
  EXPECT_EQ(labels[2], "");  // a blank line gives a blank line, not a guess
  EXPECT_EQ(labels[3], "0");
  EXPECT_EQ(labels[4], "1");
  EXPECT_EQ(labels[5], "1");
}

TEST_F(FinishedRun, PredictSplitsLinesAsTheLoadersDoAndGivesProbabilities) {
  int code = -1;
  // CR-only and CRLF line ends are line ends.
  std::string out = run_command(run_predict_command, {"--run", *dir_ + "/run"}, "beta the dog\ralpha cat\r\n\r", &code);
  EXPECT_EQ(code, 0);
  EXPECT_EQ(out, "0\n1\n\n");
  out = run_command(run_predict_command, {"--run", *dir_ + "/run", "--probabilities"}, "alpha cat\n", &code);
  ASSERT_THAT(out, ::testing::StartsWith("1\t0=")) << out;
  const double p0 = std::stod(out.substr(out.find("0=") + 2)), p1 = std::stod(out.substr(out.find("1=") + 2));
  EXPECT_NEAR(p0 + p1, 1.0, 2e-4);  // each printed to 4 decimals
  EXPECT_GT(p1, p0);
  out = run_command(run_predict_command, {"--run", *dir_ + "/run", "--json", "--probabilities"}, "alpha cat\n\n",
                    &code);
  std::istringstream lines(out);
  std::string first, second;
  std::getline(lines, first);
  std::getline(lines, second);
  const Json j = Json::parse(first);
  EXPECT_EQ(j.at("label").as_string(), "1");
  EXPECT_NEAR(j.at("probabilities").at("0").as_number() + j.at("probabilities").at("1").as_number(), 1.0, 1e-5);
  EXPECT_EQ(second, "{}");
}

TEST_F(FinishedRun, ADamagedRunFolderIsNamedNotReadWithDefaults) {
  const std::string copy = testing_support::scratch_dir() + "/run";
  std::filesystem::copy(*dir_ + "/run", copy, std::filesystem::copy_options::recursive);
  int code = -1;
  std::ofstream(copy + "/labels.txt", std::ios::trunc).flush();
  EXPECT_THAT(test_data::error_of([&] { run_command(run_eval_command, {"--run", copy}, "", &code); }),
              HasSubstr("labels.txt names 0 label(s); a classify run has at least 2"));
  std::filesystem::copy_file(*dir_ + "/run/labels.txt", copy + "/labels.txt",
                             std::filesystem::copy_options::overwrite_existing);
  std::ofstream(copy + "/run.cfg", std::ios::trunc).flush();
  EXPECT_THAT(test_data::error_of([&] { run_command(run_predict_command, {"--run", copy}, "a\n", &code); }),
              HasSubstr("run.cfg has no task line"));
  std::filesystem::copy_file(*dir_ + "/run/run.cfg", copy + "/run.cfg",
                             std::filesystem::copy_options::overwrite_existing);
  std::ofstream(copy + "/model.cfg", std::ios::trunc) << "encoder = bow\nembedding_dim = 3\n";
  EXPECT_THAT(test_data::error_of([&] { run_command(run_eval_command, {"--run", copy}, "", &code); }),
              HasSubstr("do not fit the model " + copy + "/model.cfg describes (was it edited or replaced?)"));
}

TEST_F(FinishedRun, EvalReadsTheResumableCheckpointAndRejectsForeignWeights) {
  // last.safetensors holds "model."-prefixed names plus optimiser state; eval
  // takes the model part of it.
  int code = -1;
  std::string out =
      run_command(run_eval_command, {"--run", *dir_ + "/run", "--weights", "last.safetensors"}, "", &code);
  EXPECT_EQ(code, 0);
  EXPECT_GT(Json::parse(out).at("test").at("accuracy").as_number(), 0.9);
  // A weights file of some other model names what is missing.
  save_safetensors(*dir_ + "/run/other.safetensors", {{"x", zeros({2}, DType::F32)}});
  std::string message = test_data::error_of([&] {
    run_command(run_eval_command, {"--run", *dir_ + "/run", "--weights", "other.safetensors"}, "", &code);
  });
  EXPECT_THAT(message, HasSubstr("lacks the tensor"));
}

}  // namespace
}  // namespace attn
