// MultiNLI (--format multinli): the loader on the fixture in the official
// layout, and the matched and mismatched accuracies that `attn train` and
// `attn eval` report apart.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <map>

#include "attn/train/cli/commands.h"
#include "attn/train/cli/presets.h"
#include "attn/train/data/formats/loaders.h"
#include "attn/train/data/task_data.h"
#include "attn/util/cli_args.h"
#include "attn/util/json.h"
#include "test_data_util.h"

namespace attn {
namespace {

using namespace test_data;

const std::string kFixture = std::string(ATTN_SOURCE_DIR) + "/data/fixtures/multinli";

Dataset fixture() {
  DataSpec spec;
  spec.task = TaskKind::Pair;
  spec.data = kFixture;
  spec.format = "multinli";
  return load_task_data(spec);
}

TEST(DataMultiNli, DevIsMatchedTestIsMismatchedAndBothAreReportedByName) {
  const Dataset d = fixture();
  EXPECT_EQ(d.name, "multinli");
  EXPECT_EQ(d.train.size(), 24u);
  EXPECT_EQ(d.dev.size(), 8u);  // the fixture's dev_matched has 9 lines, one with gold_label "-"
  EXPECT_EQ(d.test.size(), 9u);
  ASSERT_EQ(d.reported.size(), 2u);
  EXPECT_EQ(d.reported[0].name, "matched");
  EXPECT_EQ(d.reported[1].name, "mismatched");
  ASSERT_EQ(find_split(d, "matched"), &d.reported[0].examples);
  ASSERT_EQ(find_split(d, "mismatched"), &d.reported[1].examples);
  EXPECT_EQ(find_split(d, "dev"), &d.dev);
  EXPECT_EQ(find_split(d, "matched_dev"), nullptr);
  EXPECT_EQ(split_names(d), "train, dev, test, matched, mismatched");
  EXPECT_EQ(d.reported[0].examples.size(), d.dev.size());
  EXPECT_EQ(d.reported[1].examples.size(), d.test.size());
  for (size_t i = 0; i < d.dev.size(); ++i) EXPECT_EQ(d.reported[0].examples[i].tokens, d.dev[i].tokens);
  EXPECT_THAT(dataset_summary(d), HasSubstr("matched 8, mismatched 9"));
}

TEST(DataMultiNli, BadInputsNameTheFileAndLine) {
  const std::string dir = fresh_dir();
  const std::string good =
      R"({"genre": "fiction", "gold_label": "neutral", "sentence1": "a b .", "sentence2": "c d ."})"
      "\n";
  write(dir, "multinli_1.0_train.jsonl", good);
  write(dir, "multinli_1.0_dev_matched.jsonl", good);
  DataSpec spec;
  spec.task = TaskKind::Pair;
  spec.data = dir;
  spec.format = "multinli";
  EXPECT_THAT(error_of([&] { load_task_data(spec); }), HasSubstr("multinli_1.0_dev_mismatched.jsonl"));
  write(dir, "multinli_1.0_dev_mismatched.jsonl",
        good + R"({"gold_label": "maybe", "sentence1": "a", "sentence2": "b"})");
  const std::string msg = error_of([&] { load_task_data(spec); });
  EXPECT_THAT(msg, HasSubstr("load_multinli_jsonl"));
  EXPECT_THAT(msg, HasSubstr("multinli_1.0_dev_mismatched.jsonl:2"));
  EXPECT_THAT(msg, HasSubstr("maybe"));
}

std::string captured_stdout(const std::function<void()>& run) {
  ::testing::internal::CaptureStdout();
  try {
    run();
  } catch (...) {
    ::testing::internal::GetCapturedStdout();
    throw;
  }
  return ::testing::internal::GetCapturedStdout();
}

double accuracy_in(const Json& report, const char* split) {
  const Json* object = report.find(split);
  EXPECT_NE(object, nullptr) << split;
  return object ? object->find("accuracy")->as_number() : -1;
}

TEST(DataMultiNli, TrainAndEvalReportMatchedAndMismatchedApart) {
  const std::string run = fresh_dir() + "/run";
  captured_stdout([&] {
    run_train_command({"--task", "pair", "--format", "multinli", "--data", kFixture, "--run", run, "--model", "bow",
                       "--embedding-dim", "8", "--head-hidden", "8", "--batch", "4", "--max-steps", "3", "--quiet"});
  });
  const Json report = Json::parse(read_file_bytes(run + "/test_metrics.json"));
  const double test = accuracy_in(report, "test"), matched = accuracy_in(report, "matched"),
               mismatched = accuracy_in(report, "mismatched");
  EXPECT_DOUBLE_EQ(mismatched, test);  // test is dev_mismatched, by the same checkpoint
  EXPECT_GE(matched, 0.0);
  EXPECT_LE(matched, 1.0);

  const Json evaluated = Json::parse(captured_stdout([&] { run_eval_command({"--run", run, "--split", "matched"}); }));
  EXPECT_DOUBLE_EQ(accuracy_in(evaluated, "matched"), matched);
  EXPECT_EQ(evaluated.find("examples")->as_number(), 8);
  try {
    run_eval_command({"--run", run, "--split", "kaggle"});
    ADD_FAILURE() << "--split kaggle was accepted";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("unknown --split 'kaggle'"));
    EXPECT_THAT(e.what(), HasSubstr("matched, mismatched"));
  }
}

std::map<std::string, std::string> settings_of(const std::string& name) {
  const Preset* p = find_preset(name);
  EXPECT_NE(p, nullptr) << name;
  std::map<std::string, std::string> out;
  if (p)
    for (const PresetSetting& s : p->settings) out[s.key] = s.value;
  return out;
}

TEST(DataMultiNli, Table2RowsTrainWithTheSnliSetupAndCarryThePapersFigures) {
  std::map<std::string, std::string> snli = settings_of("mtsa-snli"), mtsa = settings_of("mtsa-multinli"),
                                     multi_head = settings_of("transformer-multinli");
  EXPECT_EQ(mtsa["format"], "multinli");
  EXPECT_EQ(multi_head["format"], "multinli");
  for (const char* key : {"optimizer", "lr", "batch", "keep-prob", "weight-decay", "max-steps"}) {
    EXPECT_EQ(mtsa[key], snli[key]) << key;
    EXPECT_EQ(multi_head[key], snli[key]) << key;
  }
  EXPECT_EQ(mtsa["model"], "mtsa");
  EXPECT_EQ(mtsa["hidden"], snli["hidden"]);
  // "600D multi-head self-attention with 8 heads" (MTSA paper Sec. 4); no MTSA-only keys.
  EXPECT_EQ(multi_head["model"], "transformer");
  EXPECT_EQ(multi_head["hidden"], "600");
  EXPECT_EQ(multi_head["heads"], "8");
  EXPECT_EQ(multi_head.count("model:sigma_t"), 0u);
  EXPECT_EQ(multi_head.count("model:attn_keep_prob"), 0u);
  EXPECT_THAT(find_preset("mtsa-multinli")->result, HasSubstr("matched 76.7, mismatched 76.4"));
  EXPECT_THAT(find_preset("transformer-multinli")->result, HasSubstr("matched 76.3, mismatched 75.7"));
}

}  // namespace
}  // namespace attn
