// The papers' presets (train/cli/presets.h): every preset names its source
// and paper figure, sets only real `attn train` options, leaves explicit
// flags alone, and an unknown name is a usage error. The end-to-end runs of
// every preset on fixture data are the CTests presets.fixture_runs_*.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <set>

#include "test_util.h"
#include "attn/models/encoder.h"
#include "attn/models/model_config_check.h"
#include "attn/train/cli/commands.h"
#include "attn/train/cli/model_flags.h"
#include "attn/train/cli/presets.h"

namespace attn {
namespace {

using ::testing::HasSubstr;

// The options of `attn train` that presets may set (train_command.cpp).
ArgParser train_like_parser() {
  ArgParser p("train", "test");
  for (const char* name : {"task", "format", "model", "optimizer", "lr", "batch", "epochs", "max-steps", "max-len",
                           "min-count", "weight-decay", "weight-decay-scope", "weight-decay-factor", "clip",
                           "keep-prob", "hidden", "heads", "head-hidden", "rl-reward", "rl-lambda", "rl-warmup",
                           "rl-only", "eval-every", "src", "tgt", "bpe-merges", "warmup", "beam", "alpha"})
    p.option(name, "default", "");
  return p;
}

TEST(Presets, EveryPaperExperimentTheIssueNamesExists) {
  for (const char* name : {"mtsa-snli", "mtsa-sst5", "mtsa-trec", "mtsa-cr", "mtsa-mpqa", "mtsa-subj", "biblosan-snli",
                           "biblosan-sick", "biblosan-sst5", "biblosan-trec", "mstrans-sst5", "mstrans-snli",
                           "resan-snli", "resan-sick", "disan-snli", "mtsa-wmt14-setup1", "transformer-wmt14-setup1",
                           "mtsa-wmt14-setup2", "transformer-wmt14-setup2"})
    EXPECT_NE(find_preset(name), nullptr) << name;
}

// The RNN and CNN baseline rows: Bi-BloSAN paper Tables 1 (SNLI), 5 (SICK)
// and 6 (classification), whose figures the MTSA paper's Tables 1 and 5 repeat.
struct BaselineRow {
  const char* preset;
  const char* encoder;
  const char* figure;
  const char* table;
};
const BaselineRow kBaselineRows[] = {
    {"bilstm-snli", "bilstm", "test accuracy 85.0", "Table 1"},
    {"bigru-snli", "bigru", "test accuracy 84.9", "Table 1"},
    {"bisru-snli", "bisru", "test accuracy 84.8", "Table 1"},
    {"multicnn-snli", "multicnn", "test accuracy 83.2", "Table 1"},
    {"hrchycnn-snli", "hrchycnn", "test accuracy 83.9", "Table 1"},
    {"bilstm-sick", "bilstm", "Pearson 0.8473, Spearman 0.7913, MSE 0.3276", "Table 5"},
    {"multicnn-sick", "multicnn", "Pearson 0.8374, Spearman 0.7793, MSE 0.3395", "Table 5"},
    {"hrchycnn-sick", "hrchycnn", "Pearson 0.8436, Spearman 0.7874, MSE 0.3162", "Table 5"},
    {"bilstm-cr", "bilstm", "accuracy 84.6", "Table 6"},
    {"bilstm-mpqa", "bilstm", "accuracy 90.2", "Table 6"},
    {"bilstm-subj", "bilstm", "accuracy 94.7", "Table 6"},
    {"bilstm-trec", "bilstm", "accuracy 94.4", "Table 6"},
    {"bilstm-sst5", "bilstm", "test accuracy 49.9", "Table 6"},
    {"bilstm-sst2", "bilstm", "test accuracy 87.7", "Table 6"},
};

std::string setting(const Preset& p, const std::string& key) {
  for (const PresetSetting& s : p.settings)
    if (s.key == key) return s.value;
  return "";
}

TEST(Presets, EveryBaselineRowOfTheTablesHasAPresetWithItsFigureAndSectionSetup) {
  for (const BaselineRow& row : kBaselineRows) {
    SCOPED_TRACE(row.preset);
    const Preset* p = find_preset(row.preset);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(setting(*p, "model"), row.encoder);
    EXPECT_THAT(p->result, HasSubstr(row.figure));
    EXPECT_THAT(p->source, HasSubstr("Bi-BloSAN paper"));
    EXPECT_THAT(p->source, HasSubstr(row.table));
    // The section's setup, shared with the Bi-BloSAN preset of the same section.
    const std::string format = setting(*p, "format");
    const Preset* biblosan = find_preset("biblosan-" + (format == "snli" || format == "sick" ? format : "sst5"));
    ASSERT_NE(biblosan, nullptr);
    for (const char* key : {"optimizer", "lr", "batch", "epochs", "keep-prob", "weight-decay", "head-hidden"})
      EXPECT_EQ(setting(*p, key), setting(*biblosan, key)) << key;
    EXPECT_EQ(setting(*p, "model:activation"), "relu");  // "in all models are set to Relu" (Sec. 4.1)
  }
  // The MTSA paper's copies of the rows name it.
  EXPECT_THAT(find_preset("bigru-snli")->source, HasSubstr("MTSA paper Table 1"));
  EXPECT_THAT(find_preset("bilstm-trec")->source, HasSubstr("MTSA paper Table 5"));
  EXPECT_THAT(find_preset("bilstm-sst2")->source, HasSubstr("not in the MTSA paper"));
  EXPECT_EQ(setting(*find_preset("bilstm-snli"), "batch"), "64");  // "for all methods" (Sec. 4.1)
  EXPECT_EQ(setting(*find_preset("bilstm-cr"), "optimizer"), "adam");
  EXPECT_EQ(setting(*find_preset("multicnn-sick"), "model:filters"), "200");
  EXPECT_EQ(setting(*find_preset("hrchycnn-snli"), "model:layers"), "3");
  EXPECT_EQ(setting(*find_preset("bigru-snli"), "hidden"), "300");
}

// Every preset names a registered encoder, and every model value it sets (its
// model:KEY lines and the options that are model keys, such as --hidden) is
// a key that encoder or the task model takes, with an allowed value: what
// `attn train` checks before it reads any data.
TEST(Presets, EveryPresetsModelSettingsAreKeysOfItsEncoder) {
  std::map<std::string, std::string> key_of_flag;
  for (const ModelFlag& f : model_flags()) key_of_flag[f.flag] = f.key;
  for (const Preset& p : all_presets()) {
    SCOPED_TRACE(p.name);
    const std::string encoder = setting(p, "model");
    ASSERT_NE(find_encoder(encoder), nullptr) << encoder;
    Config model;
    model.set("encoder", encoder);
    for (const PresetSetting& s : p.settings) {
      if (s.key.rfind("model:", 0) == 0) model.set(s.key.substr(6), s.value);
      else if (key_of_flag.count(s.key)) {
        EXPECT_NO_THROW(check_model_config_value(encoder, key_of_flag[s.key], s.value)) << s.key;
        model.set(key_of_flag[s.key], s.value);
      }
    }
    EXPECT_NO_THROW(check_model_config(model, p.name));
  }
}

TEST(Presets, EachHasASourceAFigureAndDistinctKnownSettings) {
  for (const Preset& p : all_presets()) {
    SCOPED_TRACE(p.name);
    EXPECT_THAT(p.source, ::testing::ContainsRegex("(MTSA|Bi-BloSAN|Multi-Scale Transformer|ReSAN) paper"));
    EXPECT_FALSE(p.result.empty());
    std::set<std::string> keys;
    for (const PresetSetting& s : p.settings) {
      EXPECT_TRUE(keys.insert(s.key).second) << "set twice: " << s.key;
      EXPECT_FALSE(s.value.empty()) << s.key;
    }
    // Translation runs take t2t's loop, which has no optimizer choice,
    // weight decay, clipping or keep-prob flag (refused for --task translate).
    const bool translate = setting(p, "task") == "translate";
    const std::vector<const char*> needed_keys =
        translate ? std::vector<const char*>{"task", "format", "model", "lr", "batch", "max-steps", "warmup", "bpe-merges"}
                  : std::vector<const char*>{"task", "format", "model", "optimizer", "lr", "batch", "keep-prob",
                                             "weight-decay", "clip"};  // every other preset says whether it clips
    for (const char* needed : needed_keys) EXPECT_EQ(keys.count(needed), 1u) << needed;
    ArgParser parser = train_like_parser();
    ASSERT_TRUE(parser.parse({}));
    EXPECT_NO_THROW(apply_preset(p.name, parser));  // an unknown option would throw
    // No paper clips, except Tan et al.'s SRL setup that seed 001 Table 4
    // takes whole (clip_grad_norm = 1.0).
    if (translate) EXPECT_EQ(parser.get("task"), "translate");
    else EXPECT_EQ(parser.get("clip"), setting(p, "format") == "conll05" ? "1" : "0");
  }
}

TEST(Presets, ExplicitFlagsWinAndModelKeysComeBack) {
  ArgParser parser = train_like_parser();
  ASSERT_TRUE(parser.parse({"--batch", "16"}));
  Config model = apply_preset("mtsa-snli", parser);
  EXPECT_EQ(parser.get("batch"), "16");          // given on the command line
  EXPECT_EQ(parser.get("keep-prob"), "0.65");    // the preset's p_kp
  EXPECT_EQ(parser.get("optimizer"), "adadelta");
  EXPECT_FALSE(parser.is_set("keep-prob"));      // a default, not a given flag
  EXPECT_EQ(model.get("activation", ""), "elu");  // App. B: elu for SNLI
  EXPECT_EQ(model.get("attn_keep_prob", ""), "1");
}

TEST(Presets, UnknownNameIsAUsageErrorListingTheKnownOnes) {
  ArgParser parser = train_like_parser();
  ASSERT_TRUE(parser.parse({}));
  try {
    apply_preset("mtsa-imdb", parser);
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("unknown --preset 'mtsa-imdb'"));
    EXPECT_THAT(e.what(), HasSubstr("resan-sick"));
  }
}

TEST(Presets, ListingNamesEveryPresetWithItsSourceAndUnstatedValues) {
  const std::string listing = presets_listing();
  for (const Preset& p : all_presets()) {
    EXPECT_THAT(listing, HasSubstr(p.name + ": " + p.title));
    EXPECT_THAT(listing, HasSubstr("source: " + p.source));
  }
  EXPECT_THAT(listing, HasSubstr("unstated"));
}

TEST(Presets, ListingSaysWhichPaperEachShortNameIsWithoutInternalNumbers) {
  const std::string listing = presets_listing();
  EXPECT_THAT(listing, HasSubstr("MTSA paper: Shen et al., \"Tensorized Self-Attention"));
  EXPECT_THAT(listing, HasSubstr("ReSAN paper: Shen et al., \"Reinforced Self-Attention Network"));
  EXPECT_THAT(listing, HasSubstr("Multi-Scale Transformer paper: Guo et al."));
  EXPECT_THAT(listing, HasSubstr("Bi-BloSAN paper: Shen et al., \"Bi-Directional Block Self-Attention"));
  EXPECT_THAT(listing, ::testing::Not(HasSubstr("seed 0")));
}

std::string stdout_of(int (*command)(const std::vector<std::string>&), const std::vector<std::string>& args,
                      int* rc) {
  ::testing::internal::CaptureStdout();
  *rc = command(args);
  return ::testing::internal::GetCapturedStdout();
}

TEST(Presets, PresetsNameShowsThatPresetAlone) {
  int rc = -1;
  const std::string one = stdout_of(run_presets_command, {"resan-sick"}, &rc);
  EXPECT_EQ(rc, 0);
  EXPECT_THAT(one, HasSubstr("resan-sick: ReSAN on SICK"));
  EXPECT_THAT(one, ::testing::Not(HasSubstr("mtsa-snli")));
  EXPECT_THAT(testing_support::error_of<UsageError>([] { run_presets_command({"resan-sik"}); }), HasSubstr("did you mean 'resan-sick'?"));
  EXPECT_THROW(run_presets_command({"resan-sick", "mtsa-snli"}), UsageError);
}

TEST(Presets, TrainHelpWithAPresetShowsItsValuesAsTheDefaults) {
  int rc = -1;
  const std::string plain = stdout_of(run_train_command, {"--help"}, &rc);
  const std::string with_preset = stdout_of(run_train_command, {"--preset", "mtsa-snli", "--help"}, &rc);
  EXPECT_EQ(rc, 0);
  EXPECT_THAT(plain, HasSubstr("examples per mini-batch (default: 32)"));
  EXPECT_THAT(with_preset, HasSubstr("examples per mini-batch (default: 128)"));  // App. B's batch
  EXPECT_THAT(with_preset, HasSubstr("(default: adadelta)"));
  EXPECT_THAT(with_preset, HasSubstr("model config keys: activation = elu"));
  EXPECT_THAT(testing_support::error_of<UsageError>([] { run_train_command({"--preset", "mtsa-imbd", "--help"}); }),
              HasSubstr("unknown --preset 'mtsa-imbd'"));
  for (const BaselineRow& row : kBaselineRows) {
    const std::string help = stdout_of(run_train_command, {"--preset", row.preset, "--help"}, &rc);
    EXPECT_EQ(rc, 0) << row.preset;
    EXPECT_THAT(help, HasSubstr("model config keys: activation = relu")) << row.preset;
  }
  const std::string cnn = stdout_of(run_train_command, {"--preset", "multicnn-snli", "--help"}, &rc);
  EXPECT_THAT(cnn, HasSubstr("filters = 200"));
  EXPECT_THAT(cnn, HasSubstr("examples per mini-batch (default: 64)"));
}

TEST(Presets, AnotherModelThatCannotTakeThePresetsSettingsNamesThePreset) {
  const std::string err =
      testing_support::error_of<UsageError>([] { run_train_command({"--preset", "mtsa-sst5", "--model", "bow", "--data", "unused"}); });
  EXPECT_THAT(err, HasSubstr("--preset mtsa-sst5 sets model settings of the mtsa encoder that --model bow does not take"));
  EXPECT_THAT(err, HasSubstr("'--hidden 600'"));
  EXPECT_THAT(err, ::testing::Not(HasSubstr(".cpp:")));
}

TEST(Commands, EveryCommandsHelpEndsWithAnExampleOfItself) {
  for (const Command& c : all_commands()) {
    int rc = -1;
    const std::string help = stdout_of(c.run, {"--help"}, &rc);
    EXPECT_EQ(rc, 0) << c.name;
    const size_t examples = help.find("\nexamples:\n");
    ASSERT_NE(examples, std::string::npos) << c.name << " --help has no examples";
    EXPECT_THAT(help.substr(examples), HasSubstr("attn " + std::string(c.name) + " ")) << c.name;
  }
}

TEST(ArgParser, SetDefaultNeverOverridesAGivenValueAndRejectsUnknownNames) {
  ArgParser p("x", "test");
  p.option("lr", "0", "");
  ASSERT_TRUE(p.parse({"--lr", "0.1"}));
  p.set_default("lr", "0.5");
  EXPECT_EQ(p.get("lr"), "0.1");
  EXPECT_THROW(p.set_default("no-such", "1"), std::logic_error);
}

}  // namespace
}  // namespace attn
