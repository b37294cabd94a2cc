// The synthetic SVO -> SOV translation task (train/synthetic/svo_translation.h)
// and `attn synth-translation`, whose files the parallel-text loader reads.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "attn/train/cli/commands.h"
#include "attn/train/data/formats/loaders.h"
#include "attn/train/synthetic/svo_translation.h"
#include "attn/util/cli_args.h"
#include "attn/util/text.h"
#include "test_util.h"

namespace attn {
namespace {

using testing_support::error_of;
using testing_support::scratch_dir;

TEST(SvoTranslation, IsDeterministicInItsSeed) {
  EXPECT_EQ(svo_to_sov_pairs(50, 3), svo_to_sov_pairs(50, 3));
  EXPECT_NE(svo_to_sov_pairs(50, 3), svo_to_sov_pairs(50, 4));
  // A longer draw starts with the shorter one.
  const auto longer = svo_to_sov_pairs(80, 3), shorter = svo_to_sov_pairs(50, 3);
  EXPECT_TRUE(std::equal(shorter.begin(), shorter.end(), longer.begin()));
}

TEST(SvoTranslation, FollowsTheGrammar) {
  std::set<size_t> lengths;
  for (const auto& [source, target] : svo_to_sov_pairs(300, 1)) {
    const auto s = text::split_whitespace(source), t = text::split_whitespace(target);
    ASSERT_EQ(s.size(), t.size()) << source;  // one target word per source word
    lengths.insert(s.size());
    EXPECT_EQ(s[0], "the");
    EXPECT_EQ(t[0], "de");
    // The target verb is last and agrees with the subject noun's number.
    const bool plural_subject = t[1].back() == 'n' || t[1] == "kindor";
    const std::string suffix = t.back().substr(t.back().size() - 2);
    EXPECT_EQ(suffix, plural_subject ? "en" : "et") << target;
  }
  // Sentences of 5 (no adjectives) to 9 words (two on each noun) occur.
  EXPECT_EQ(*lengths.begin(), 5u);
  EXPECT_EQ(*lengths.rbegin(), 9u);
}

TEST(SvoTranslation, IsInvertible) {
  std::set<std::string> targets;
  for (const auto& [source, target] : svo_to_sov_pairs(500, 2)) {
    EXPECT_EQ(sov_to_svo(target), source);
    targets.insert(target);
  }
  EXPECT_EQ(targets.size(), 500u);  // distinct sources have distinct targets
  EXPECT_EQ(sov_to_svo("de kazin gros de hunu sahen"), "the big cats saw the dog");
  EXPECT_NE(error_of([] { sov_to_svo("de kazin de hunu sahet"); }).find("does not agree"), std::string::npos);
  EXPECT_NE(error_of([] { sov_to_svo("de kazin hunu sahen"); }).find("expected 'de'"), std::string::npos);
  EXPECT_NE(error_of([] { sov_to_svo("de kazi de hunu"); }).find("no verb at the end"), std::string::npos);
  EXPECT_NE(error_of([] { sov_to_svo("de kazi de hunu rufet de"); }).find("more than one word"), std::string::npos);
  EXPECT_NE(error_of([] { sov_to_svo("de kazi de hunu kommet"); }).find("expected a verb"), std::string::npos);
  EXPECT_NE(error_of([] { svo_to_sov_pairs(-1, 0); }).find("0..1000000"), std::string::npos);
}

TEST(SvoTranslation, CommandWritesFilesTheLoaderReads) {
  const std::string out = scratch_dir() + "/synth";
  ASSERT_EQ(run_synth_translation_command({"--out", out, "--sentences", "40", "--dev-sentences", "5",
                                           "--test-sentences", "6", "--seed", "9"}),
            0);
  const Dataset d = load_parallel_text_dir(out, "en", "de");
  EXPECT_EQ(d.train.size(), 40u);
  EXPECT_EQ(d.dev.size(), 5u);
  EXPECT_EQ(d.test.size(), 6u);
  const auto pairs = svo_to_sov_pairs(51, 9);
  EXPECT_EQ(text::read_lines("test", out + "/test.de").back(), pairs.back().second);
  // No sentence is in two splits.
  std::set<std::vector<std::string>> seen;
  for (const auto* split : {&d.train, &d.dev, &d.test})
    for (const Example& e : *split) EXPECT_TRUE(seen.insert(e.tokens).second);
  // An existing non-empty folder is refused unless --overwrite.
  EXPECT_NE(error_of<UsageError>([&] { run_synth_translation_command({"--out", out}); }).find("is not empty"),
            std::string::npos);
  EXPECT_EQ(run_synth_translation_command({"--out", out, "--sentences", "10", "--overwrite"}), 0);
  EXPECT_EQ(text::read_lines("test", out + "/train.en").size(), 10u);
  EXPECT_NE(error_of<UsageError>([&] { run_synth_translation_command({"--out", out + "2", "--sentences", "0"}); })
                .find("--sentences"),
            std::string::npos);
  EXPECT_NE(error_of<UsageError>([&] {
              run_synth_translation_command({"--out", out + "2", "--src-lang", "de"});
            }).find("both 'de'"),
            std::string::npos);
}

TEST(SvoTranslation, BleuCommandScoresAndCompares) {
  const std::string dir = scratch_dir();
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir + "/" + name) << text;
    return dir + "/" + name;
  };
  const std::string ref = write("ref", "the cat sat on the mat\nthe dog ran home today\n");
  const std::string hyp = write("hyp", "the cat sat on the mat\nthe dog ran home today\n");
  const std::string hyp2 = write("hyp2", "the the the the\nthe dog ran home\n");
  ::testing::internal::CaptureStdout();
  ASSERT_EQ(run_bleu_command({"--ref", ref, "--hyp", hyp, "--hyp2", hyp2, "--samples", "20"}), 0);
  const std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("hyp:  BLEU = 100.00 100.0/100.0/100.0/100.0 (BP = 1.000"), std::string::npos) << out;
  EXPECT_NE(out.find("hyp wins 20, hyp2 wins 0"), std::string::npos) << out;
  EXPECT_NE(out.find("p = 0.0000 (Koehn 2004)"), std::string::npos) << out;
  const std::string short_file = write("short", "one line\n");
  const std::string empty_file = write("empty", "");
  EXPECT_NE(error_of([&] { run_bleu_command({"--ref", ref, "--hyp", short_file}); }).find("has 1 lines but --ref"),
            std::string::npos);
  EXPECT_NE(error_of([&] { run_bleu_command({"--ref", ref, "--hyp", empty_file}); }).find("is empty"),
            std::string::npos);
  EXPECT_NE(error_of<UsageError>([&] { run_bleu_command({"--ref", ref, "--hyp", dir + "/missing"}); })
                .find("is not a file"),
            std::string::npos);
  EXPECT_NE(error_of<UsageError>([&] { run_bleu_command({"--ref", ref, "--hyp", hyp, "--hyp2", hyp2, "--samples", "0"}); })
                .find("--samples"),
            std::string::npos);
  EXPECT_NE(error_of<UsageError>([&] { run_bleu_command({"--ref", ref}); }).find("--hyp is required"),
            std::string::npos);
  EXPECT_NE(error_of<UsageError>([&] { run_bleu_command({"--ref", ref, "--hyp", hyp, "--bogus", "1"}); })
                .find("bogus"),
            std::string::npos);
}

}  // namespace
}  // namespace attn
