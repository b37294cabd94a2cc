// The command-line parser's refusals: an empty value, a flag where a value
// belongs, and an unknown flag named with the nearest known one.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "attn/util/cli_args.h"

namespace attn {
namespace {

ArgParser train_like() {
  ArgParser p("train", "test");
  p.option("run", "", "run folder").option("data", "", "data").option("epochs", "2", "epochs");
  p.flag("overwrite", "start over").flag("resume", "continue");
  return p;
}

std::string usage_error(const std::vector<std::string>& args) {
  ArgParser p = train_like();
  try {
    p.parse(args);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(ArgParser, AnEmptyValueIsRefusedNotTakenAsNotGiven) {
  EXPECT_NE(usage_error({"--data", ""}).find("'--data' needs a non-empty value"), std::string::npos);
  EXPECT_NE(usage_error({"--run="}).find("'--run' needs a non-empty value"), std::string::npos);
}

TEST(ArgParser, AFlagWhereAValueBelongsIsRefused) {
  EXPECT_NE(usage_error({"--run", "--overwrite"}).find("'--run' needs a value, got the flag '--overwrite'"),
            std::string::npos);
  EXPECT_NE(usage_error({"--run", "--epochs=3"}).find("got the flag '--epochs=3'"), std::string::npos);
  // A value that merely starts with dashes but names no flag is a value.
  ArgParser p = train_like();
  ASSERT_TRUE(p.parse({"--run", "--my-folder"}));
  EXPECT_EQ(p.get("run"), "--my-folder");
}

TEST(ArgParser, AnUnknownFlagNamesTheNearestKnownOne) {
  EXPECT_NE(usage_error({"--epoch", "3"}).find("unknown flag '--epoch' (did you mean '--epochs'?)"),
            std::string::npos);
  EXPECT_NE(usage_error({"--overwirte"}).find("did you mean '--overwrite'?"), std::string::npos);
  const std::string far = usage_error({"--learning-rate", "1"});
  EXPECT_NE(far.find("unknown flag '--learning-rate'"), std::string::npos);
  EXPECT_EQ(far.find("did you mean"), std::string::npos);
}

TEST(ArgParser, GivenValuesAndDefaultsStillParse) {
  ArgParser p = train_like();
  ASSERT_TRUE(p.parse({"--run", "r", "--data=d", "--overwrite"}));
  EXPECT_EQ(p.get("run"), "r");
  EXPECT_EQ(p.get("data"), "d");
  EXPECT_EQ(p.get_int("epochs"), 2);
  EXPECT_TRUE(p.is_set("overwrite"));
  EXPECT_FALSE(p.is_set("resume"));
}

TEST(ArgParser, AChoiceOutsideItsValuesIsAUsageErrorNamingThemAndTheNearest) {
  ArgParser p("train", "test");
  p.option("task", "classify", "task").option("device", "cpu", "device");
  ASSERT_TRUE(p.parse({"--task", "tagg"}));
  EXPECT_EQ(p.get_choice("device", {"cpu", "cuda"}), "cpu");
  try {
    p.get_choice("task", {"classify", "pair", "relatedness", "tag"});
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("unknown --task 'tagg' (did you mean 'tag'?); known: classify, pair"));
  }
}

TEST(ArgParser, HelpNamesEachValuesKind) {
  ArgParser p("train", "test");
  p.option("run", "", "PATH: run folder").option("epochs", "3", "epochs").option("lr", "0.5", "rate");
  p.option("optimizer", "adam", "which").flag("quiet", "no output");
  const std::string help = p.help();
  EXPECT_THAT(help, ::testing::HasSubstr("--run PATH"));
  EXPECT_THAT(help, ::testing::HasSubstr("run folder"));
  EXPECT_EQ(help.find("PATH: run folder"), std::string::npos);
  EXPECT_THAT(help, ::testing::HasSubstr("--epochs INT"));
  EXPECT_THAT(help, ::testing::HasSubstr("--lr FLOAT"));
  EXPECT_THAT(help, ::testing::HasSubstr("--optimizer VALUE"));
  EXPECT_THAT(help, ::testing::HasSubstr("--quiet  "));
}

}  // namespace
}  // namespace attn
