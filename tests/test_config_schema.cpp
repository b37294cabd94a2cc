// The config tables (models/config_schema.h): a model config is checked
// against them (unknown key, wrong type, out of range, each error naming the
// key), builders take their defaults from them, `attn train` makes its model
// flags and its list of keys from them, and docs/models.md holds the same
// keys, types, defaults and ranges.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "attn/engine/error.h"
#include "attn/models/config_schema.h"
#include "attn/models/config_schema_text.h"
#include "attn/models/encoder.h"
#include "attn/models/model_config_check.h"
#include "attn/models/mtsa.h"
#include "attn/models/multiscale.h"
#include "attn/models/resan.h"
#include "attn/models/task_model.h"
#include "attn/models/transformer.h"
#include "attn/train/cli/commands.h"
#include "attn/train/cli/model_flags.h"
#include "attn/util/cli_args.h"
#include "test_util.h"

using namespace attn;
using attn::testing_support::error_of;
using attn::testing_support::scratch_path;
using ::testing::HasSubstr;

namespace {

std::string check_error(const std::string& text) {
  return error_of([&] { check_model_config(Config::parse(text), "the test config"); });
}

// The error of the encoder's builder itself (its reads through the table).
std::string build_error(const std::string& text) {
  return error_of([&] {
    Generator init(1), noise(2);
    build_encoder(Config::parse(text), EncoderContext{8, DType::F32, &init, &noise});
  });
}

// What `attn train ARGS` stops with before reading any data.
std::string train_error(const std::vector<std::string>& args) {
  try {
    run_train_command(args);
  } catch (const UsageError& e) {
    return std::string("usage: ") + e.what();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

std::vector<const ConfigSchema*> every_table() {
  std::vector<const ConfigSchema*> tables = {&task_model_config_keys()};
  for (const EncoderInfo& info : encoder_registry()) tables.push_back(&info.config_keys());
  return tables;
}

constexpr const char* kHuge = "4611686018427387904";  // 2^62

}  // namespace

TEST(ConfigSchema, UnknownKeyIsNamedWithTheKnownOnes) {
  const std::string e = check_error("encoder = mtsa\nhiden = 16\n");
  EXPECT_THAT(e, HasSubstr("does not know the key(s): hiden"));
  EXPECT_THAT(e, HasSubstr("attn_keep_prob"));  // the known keys follow
  // A key of another encoder is unknown to this one.
  EXPECT_THAT(check_error("encoder = disan\nheads = 2\n"), HasSubstr("does not know the key(s): heads"));
  EXPECT_THAT(check_error("encoder = nope\n"), HasSubstr("unknown encoder 'nope' (known: mtsa, disan, biblosan"));
}

TEST(ConfigSchema, WrongTypeNamesTheKeyAndTheValue) {
  EXPECT_THAT(check_error("hidden = abc\n"), HasSubstr("key 'hidden' of mtsa expects an integer, got 'abc'"));
  EXPECT_THAT(check_error("hidden = 3.5\n"), HasSubstr("key 'hidden' of mtsa expects an integer, got '3.5'"));
  const std::string finite = "key 'keep_prob' of the task model expects a finite number";
  EXPECT_THAT(check_error("keep_prob = high\n"), HasSubstr(finite));
  EXPECT_THAT(check_error("keep_prob = nan\n"), HasSubstr(finite));
  EXPECT_THAT(check_error("keep_prob = inf\n"), HasSubstr(finite));
  EXPECT_THAT(check_error("encoder = disan\nmaterialize_scores = maybe\n"),
              HasSubstr("key 'materialize_scores' of disan expects true or false, got 'maybe'"));
  EXPECT_THAT(check_error("activation = rleu\n"),
              HasSubstr("key 'activation' of mtsa must be one of relu, elu, tanh, sigmoid, identity, got 'rleu'"));
  EXPECT_THAT(check_error("encoder = mstrans\nhead_counts = 1,x\n"),
              HasSubstr("key 'head_counts' of mstrans expects integers separated by commas, got '1,x'"));
  EXPECT_THAT(check_error("encoder = mstrans\nscales = 1,2\n"), HasSubstr("key 'scales' of mstrans expects"));
  EXPECT_THAT(check_error("head_masks = forward, sideways\n"), HasSubstr("key 'head_masks' of mtsa expects"));
}

TEST(ConfigSchema, OutOfRangeNamesTheKeyTheValueAndTheRange) {
  EXPECT_THAT(check_error(std::string("hidden = ") + kHuge + "\n"),
              HasSubstr(std::string("key 'hidden' of mtsa must lie in 1..65536, got '") + kHuge + "'"));
  // Beyond int64: refused, never saturated to the largest integer.
  EXPECT_THAT(check_error("hidden = 99999999999999999999\n"), HasSubstr("key 'hidden' of mtsa expects an integer"));
  EXPECT_THAT(check_error("heads = 0\n"), HasSubstr("key 'heads' of mtsa must lie in 1..1024, got '0'"));
  EXPECT_THAT(check_error("window = -1\n"), HasSubstr("key 'window' of mtsa must lie in 0..1048576, got '-1'"));
  EXPECT_THAT(check_error("keep_prob = 1.5\n"),
              HasSubstr("key 'keep_prob' of the task model must lie in (0, 1], got '1.5'"));
  EXPECT_THAT(check_error("keep_prob = 0\n"), HasSubstr("must lie in (0, 1], got '0'"));
  EXPECT_THAT(check_error("embedding_dim = 0\n"),
              HasSubstr("key 'embedding_dim' of the task model must lie in 1..65536"));
  EXPECT_THAT(check_error("encoder = biblosan\nblock_len = 0\n"), HasSubstr("key 'block_len' of biblosan must lie in"));
  EXPECT_THAT(check_error("encoder = transformer\nlayers = 1001\n"),
              HasSubstr("key 'layers' of transformer must lie in 1..1000, got '1001'"));
  // Every encoder with a width refuses 2^62, in the check and in its own builder.
  for (const EncoderInfo& info : encoder_registry()) {
    if (!info.config_keys().find("hidden")) continue;
    const std::string config = std::string("encoder = ") + info.name + "\nhidden = " + kHuge + "\n";
    const std::string expected = std::string("key 'hidden' of ") + info.name + " must lie in 1..65536";
    EXPECT_THAT(check_error(config), HasSubstr(expected));
    EXPECT_THAT(build_error(config), HasSubstr(expected));
  }
}

TEST(ConfigSchema, DefaultsAndPresetConfigsPass) {
  for (const EncoderInfo& info : encoder_registry()) {
    EXPECT_EQ(check_error(std::string("encoder = ") + info.name + "\n"), "(no error)") << info.name;
    EXPECT_EQ(build_error(std::string("encoder = ") + info.name + "\n"), "(no error)") << info.name;
  }
  EXPECT_EQ(check_error("encoder = mtsa\nhidden = 65536\nheads = 1024\nkeep_prob = 1\nattn_keep_prob = 0.8\n"),
            "(no error)");
}

TEST(ConfigSchema, EveryRowIsWellFormed) {
  for (const ConfigSchema* table : every_table()) {
    for (const ConfigKey& k : table->keys()) {
      SCOPED_TRACE(table->owner() + ": " + k.name);
      EXPECT_FALSE(k.doc.empty());
      EXPECT_TRUE(k.has_default() || !k.default_doc.empty()) << "a key without a default says why";
      if (k.has_default()) {
        EXPECT_NO_THROW(check_config_value(k, k.default_value, table->owner()));
      }
      EXPECT_EQ(k.doc.find('\n'), std::string::npos);
      EXPECT_EQ(k.allowed().find('|'), std::string::npos);  // it goes into a Markdown cell
      EXPECT_EQ(k.shown_default().find('|'), std::string::npos);
      if (k.type == ConfigType::Int || k.type == ConfigType::IntList) {
        // Bounded so that no product of sizes can overflow int64.
        EXPECT_GE(k.min, -1e6);
        EXPECT_LE(k.max, 4.0 * config_limits::kWidth + config_limits::kLength);
      }
    }
  }
}

TEST(ConfigSchema, EveryChoiceIsOneTheBuilderKnows) {
  for (const EncoderInfo& info : encoder_registry()) {
    for (const ConfigKey& k : info.config_keys().keys()) {
      if (k.type != ConfigType::Choice) continue;
      for (const std::string& choice : k.choices) {
        const std::string config = std::string("encoder = ") + info.name + "\n" + k.name + " = " + choice + "\n";
        EXPECT_THAT(build_error(config), ::testing::Not(HasSubstr("unknown"))) << config;
      }
    }
  }
  for (const ConfigKey& k : task_model_config_keys().keys()) {
    if (k.type != ConfigType::Choice || k.name == "encoder") continue;
    for (const std::string& choice : k.choices) {
      Config c = Config::parse("encoder = bow\nembedding_dim = 4\nhead_hidden = 4\n" + k.name + " = " + choice + "\n");
      Generator init(1), noise(2);
      EXPECT_NO_THROW(TaskModel(c, TaskKind::Pair, 10, 3, DType::F32, init, noise)) << k.name << " = " << choice;
    }
  }
}

TEST(ConfigSchema, BuildersAndOptionsStartFromTheTable) {
  const ConfigSchema& mtsa = mtsa_config_keys();
  EXPECT_EQ(MtsaOptions().heads, mtsa.default_int("heads"));
  EXPECT_EQ(MtsaOptions().window, mtsa.default_int("window"));
  EXPECT_EQ(TransformerOptions().heads, transformer_config_keys().default_int("heads"));
  EXPECT_EQ(MultiScaleOptions().layers, mstrans_config_keys().default_int("layers"));
  EXPECT_EQ(ResanOptions().keep_prob, resan_config_keys().default_float("keep_prob"));
  Generator init(1), noise(2);
  auto encoder = build_encoder(Config(), EncoderContext{8, DType::F32, &init, &noise});
  EXPECT_EQ(encoder->token_dim(), mtsa.default_int("hidden"));
  EXPECT_EQ(static_cast<Mtsa&>(*encoder).layer().heads(), mtsa.default_int("heads"));
  // A derived default: ffn_dim follows hidden (4 * hidden).
  auto size_of = [&](const std::string& text) {
    return build_encoder(Config::parse("encoder = transformer\nhidden = 20\nheads = 2\n" + text),
                         EncoderContext{8, DType::F32, &init, &noise})
        ->parameter_count();
  };
  EXPECT_EQ(size_of(""), size_of("ffn_dim = 80\n"));
  EXPECT_NE(size_of(""), size_of("ffn_dim = 40\n"));
}

TEST(ConfigSchema, DefaultEncoderIsNamedOnce) {
  ASSERT_NE(find_encoder(kDefaultEncoder), nullptr);
  EXPECT_EQ(encoder_name(Config()), kDefaultEncoder);
  const ConfigKey* key = task_model_config_keys().find("encoder");
  ASSERT_NE(key, nullptr);
  EXPECT_EQ(key->default_value, kDefaultEncoder);
  std::vector<std::string> registered;
  for (const EncoderInfo& info : encoder_registry()) registered.push_back(info.name);
  EXPECT_EQ(key->choices, registered);
}

TEST(ConfigFlags, TrainFlagsAndTheirHelpComeFromTheTables) {
  std::set<std::string> marked;
  for (const ConfigSchema* table : every_table())
    for (const ConfigKey& k : table->keys())
      if (k.flag) marked.insert(k.name);
  std::set<std::string> keys, flags;
  for (const ModelFlag& f : model_flags()) {
    keys.insert(f.key);
    flags.insert(f.flag);
    EXPECT_THAT(f.help, HasSubstr("config key " + f.key)) << f.flag;
  }
  EXPECT_EQ(keys, marked);
  EXPECT_EQ(flags, (std::set<std::string>{"embedding-dim", "head-hidden", "heads", "hidden", "keep-prob"}));

  ::testing::internal::CaptureStdout();
  run_train_command({"--help"});
  const std::string help = ::testing::internal::GetCapturedStdout();
  // Each flag shows its value's kind, from the key's type.
  for (const ModelFlag& f : model_flags()) EXPECT_THAT(help, ::testing::ContainsRegex("--" + f.flag + " (INT|FLOAT) ")) << f.flag;
  EXPECT_THAT(help, HasSubstr("--keep-prob FLOAT"));
  EXPECT_THAT(help, HasSubstr("--heads INT"));
  EXPECT_THAT(help, HasSubstr("int 1..65536, default 300"));  // --hidden's range and default
  for (const ConfigSchema* table : every_table())
    for (const ConfigKey& k : table->keys()) EXPECT_THAT(help, HasSubstr("    " + k.name + " ")) << k.name;
}

TEST(ConfigFlags, ABadFlagNamesTheFlagTheKeyAndTheRange) {
  const std::string run = scratch_path("run");
  const std::string huge = train_error({"--model", "mtsa", "--hidden", kHuge, "--run", run, "--quiet"});
  EXPECT_THAT(huge, HasSubstr("usage: attn train: option '--hidden'"));
  EXPECT_THAT(huge, HasSubstr(std::string("key 'hidden' of mtsa must lie in 1..65536, got '") + kHuge + "'"));
  EXPECT_THAT(train_error({"--keep-prob", "0", "--run", run}), HasSubstr("option '--keep-prob'"));
  EXPECT_THAT(train_error({"--keep-prob", "0", "--run", run}), HasSubstr("(0, 1]"));
  EXPECT_THAT(train_error({"--embedding-dim", "x", "--run", run}), HasSubstr("expects an integer, got 'x'"));
  EXPECT_THAT(train_error({"--model", "disan", "--heads", "2", "--run", run}),
              HasSubstr("option '--heads': config: encoder disan has no config key 'heads'"));
  // A value from --config: an error naming the key (the file is model.cfg's format).
  const std::string config = scratch_path("model.cfg");
  std::ofstream(config) << "encoder = transformer\nlayers = 0\n";
  EXPECT_THAT(train_error({"--config", config, "--run", run}),
              HasSubstr("key 'layers' of transformer must lie in 1..1000, got '0'"));
  std::ofstream(config) << "encoder = transformer\nlayer = 2\n";
  EXPECT_THAT(train_error({"--config", config, "--run", run}), HasSubstr("does not know the key(s): layer"));
  EXPECT_FALSE(std::ifstream(run + "/model.cfg").good()) << "nothing is written for a bad config";
}

TEST(ConfigDocs, ModelsMdTablesMatchTheConfigTables) {
  std::ifstream in(std::string(ATTN_SOURCE_DIR) + "/docs/models.md");
  ASSERT_TRUE(in.good());
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  for (const ConfigSchema* table : every_table()) {
    const std::string marker = "<!-- config keys: " + table->owner() + " -->";
    std::vector<size_t> at;
    for (size_t i = 0; i < lines.size(); ++i)
      if (lines[i] == marker) at.push_back(i);
    std::string expected = marker + "\n" + config_keys_markdown_header() + " meaning |\n|---|---|---|---|---|\n";
    for (const std::string& row : config_keys_markdown_rows(*table)) expected += row + " (meaning) |\n";
    if (table->keys().empty()) {
      EXPECT_TRUE(at.empty()) << table->owner() << " has no keys, so docs/models.md needs no table";
      continue;
    }
    ASSERT_EQ(at.size(), 1u) << "docs/models.md needs one table of " << table->owner() << "'s keys:\n" << expected;
    // The header (its last cell names the docs' column), then the rows.
    size_t i = at[0] + 1;
    ASSERT_LT(i + 1, lines.size());
    EXPECT_EQ(lines[i].rfind(config_keys_markdown_header() + " ", 0), 0u) << table->owner() << ": " << lines[i];
    EXPECT_EQ(lines[i + 1], "|---|---|---|---|---|") << table->owner();
    std::vector<std::string> found;
    for (i += 2; i < lines.size() && !lines[i].empty() && lines[i][0] == '|'; ++i) found.push_back(lines[i]);
    const std::vector<std::string> rows = config_keys_markdown_rows(*table);
    bool agree = found.size() == rows.size();
    for (size_t r = 0; agree && r < rows.size(); ++r)
      agree = found[r].rfind(rows[r] + " ", 0) == 0 && found[r].size() > rows[r].size() + 2;
    EXPECT_TRUE(agree) << "docs/models.md disagrees with the config table of " << table->owner()
                       << "; its rows must start:\n" << expected;
  }
}
