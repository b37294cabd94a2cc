// Joint BPE (train/text/bpe.h) and the pretokenisation around it
// (train/text/pretokenize.h). Expected merges are derived by hand in the
// comments: symbols are characters, a word's last one marked "</w>".
#include <gtest/gtest.h>

#include <fstream>

#include "attn/train/cli/commands.h"
#include "attn/train/text/bpe.h"
#include "attn/util/cli_args.h"
#include "attn/util/text.h"
#include "attn/train/text/pretokenize.h"
#include "test_util.h"

namespace attn {
namespace {

using testing_support::error_of;
using testing_support::scratch_path;
using Merges = std::vector<std::pair<std::string, std::string>>;
using Units = std::vector<std::string>;

// Words ab x3, abc x1, bc x1 -> [a b</w>] x3, [a b c</w>], [b c</w>].
// Pair counts: (a,b</w>) 3, (b,c</w>) 1 + 1 = 2, (a,b) 1.
// Merge 1: (a, b</w>) (3). Then [ab</w>] x3, [a b c</w>], [b c</w>]:
// (b,c</w>) 2, (a,b) 1. Merge 2: (b, c</w>). Then [a bc</w>], [bc</w>]:
// (a,bc</w>) 1 < 2, so learning stops after 2 merges however many are asked.
const std::vector<std::string> kCorpus = {"ab ab", "ab abc bc"};

TEST(Bpe, LearnsTheHandDerivedMerges) {
  const Bpe bpe = Bpe::learn(kCorpus, 10);
  EXPECT_EQ(bpe.merge_list(), (Merges{{"a", "b</w>"}, {"b", "c</w>"}}));
  EXPECT_EQ(bpe.merges(), 2);
  EXPECT_EQ(Bpe::learn(kCorpus, 1).merge_list(), (Merges{{"a", "b</w>"}}));
}

TEST(Bpe, TiesGoToTheLargerPairAsInSubwordNmt) {
  // (x, y</w>) and (z, w</w>) both occur twice; "z" > "x" in byte order.
  EXPECT_EQ(Bpe::learn({"xy xy zw zw"}, 5).merge_list(), (Merges{{"z", "w</w>"}, {"x", "y</w>"}}));
}

TEST(Bpe, CountsFollowEachMerge) {
  // aaa x2 = [a a a</w>]: (a,a) 2, (a,a</w>) 2; tie, right "a</w>" > "a":
  // merge (a, a</w>) -> [a aa</w>], which leaves (a,a) at 0 (a stale count
  // of 2 would add a third merge) and (a, aa</w>) at 2: merge it -> [aaa</w>].
  EXPECT_EQ(Bpe::learn({"aaa aaa"}, 10).merge_list(), (Merges{{"a", "a</w>"}, {"a", "aa</w>"}}));
  // aaaa x2 = [a a a a</w>]: (a,a) 2 x 2 = 4, (a,a</w>) 2. Merge (a,a) left to
  // right without overlap -> [aa a a</w>]: (aa,a) 2, (a,a</w>) 2; tie, left
  // "aa" > "a": merge (aa, a) -> [aaa a</w>], then (aaa, a</w>) -> [aaaa</w>].
  EXPECT_EQ(Bpe::learn({"aaaa", "aaaa"}, 10).merge_list(),
            (Merges{{"a", "a"}, {"aa", "a"}, {"aaa", "a</w>"}}));
}

TEST(Bpe, MergesNeverCrossWords) {
  // "a b" twice is a frequent pair of neighbours, but each word is a single
  // character: there is no pair inside a word to merge.
  EXPECT_EQ(Bpe::learn({"a b", "a b"}, 10).merges(), 0);
}

TEST(Bpe, EncodesWithTheLearnedMerges) {
  const Bpe bpe = Bpe::learn(kCorpus, 10);
  // abc: [a b c</w>], only (b,c</w>) is a merge -> [a bc</w>];
  // ab -> [ab</w>]; bc -> [bc</w>]; cab: [c a b</w>] -> [c ab</w>].
  EXPECT_EQ(bpe.encode("abc ab bc cab"), (Units{"a@@", "bc", "ab", "bc", "c@@", "ab"}));
  EXPECT_EQ(Bpe::decode(bpe.encode("abc ab bc cab")), "abc ab bc cab");
}

TEST(Bpe, EncodesSplitWords) {
  const Bpe bpe = Bpe::learn(kCorpus, 10);
  EXPECT_EQ(bpe.encode_words({"abc", "cab"}), bpe.encode("abc cab"));
  EXPECT_NE(error_of([&] { bpe.encode_words({"a b"}); }).find("hold no whitespace, got 'a b'"), std::string::npos);
  EXPECT_NE(error_of([&] { bpe.encode_words({""}); }).find("non-empty"), std::string::npos);
}

TEST(Bpe, UnseenCharactersStayCharacters) {
  const Bpe bpe = Bpe::learn(kCorpus, 10);
  EXPECT_EQ(bpe.encode("xyz"), (Units{"x@@", "y@@", "z"}));
  // A two-byte character is one unit, never two bytes.
  EXPECT_EQ(bpe.encode("\xc3\xbc" "b"), (Units{"\xc3\xbc@@", "b"}));
}

TEST(Bpe, ZeroMergesGivesCharacters) {
  const Bpe bpe = Bpe::learn(kCorpus, 0);
  EXPECT_EQ(bpe.merges(), 0);
  EXPECT_EQ(bpe.encode("abc d"), (Units{"a@@", "b@@", "c", "d"}));
  EXPECT_NE(error_of([] { Bpe::learn(kCorpus, -1); }).find("must be >= 0, got -1"), std::string::npos);
}

TEST(Bpe, EncodeAppliesTheEarliestMergeFirst) {
  // Merges (b, c</w>) then (a, b): in "abc" both pairs are present; the
  // earlier merge wins though it is to the right -> [a bc</w>], and (a, bc</w>)
  // is no merge. Merging left to right instead would give [ab c</w>].
  const std::string path = scratch_path("order.bpe");
  std::ofstream(path) << "#version: 0.2\nb c</w>\na b\n#attn-bpe-end 2\n";
  EXPECT_EQ(Bpe::load(path).encode("abc"), (Units{"a@@", "bc"}));
}

TEST(Bpe, DecodeGluesContinuedUnits) {
  EXPECT_EQ(Bpe::decode({"Ver@@", "trag", "ist", "gu@@", "t", "."}), "Vertrag ist gut .");
  EXPECT_EQ(Bpe::decode({}), "");
}

TEST(Bpe, SaveAndLoadRoundTrip) {
  const Bpe bpe = Bpe::learn(kCorpus, 10);
  const std::string path = scratch_path("codes.bpe");
  bpe.save(path);
  std::ifstream in(path);
  const std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(file, "#version: 0.2\na b</w>\nb c</w>\n#attn-bpe-end 2\n");
  const Bpe loaded = Bpe::load(path);
  EXPECT_EQ(loaded.merge_list(), bpe.merge_list());
  EXPECT_EQ(loaded.encode("abc cab"), bpe.encode("abc cab"));
}

TEST(Bpe, LoadRefusesDamagedFiles) {
  auto load_text = [](const std::string& name, const std::string& text) {
    const std::string path = scratch_path(name);
    std::ofstream(path) << text;
    return error_of([&] { Bpe::load(path); });
  };
  EXPECT_NE(load_text("header", "hello\na b\n").find("not a BPE codes file"), std::string::npos);
  EXPECT_NE(load_text("truncated", "#version: 0.2\na b</w>\nb c</w>\n").find("truncated"), std::string::npos);
  EXPECT_NE(load_text("count", "#version: 0.2\na b</w>\n#attn-bpe-end 3\n").find("says '3' merges"),
            std::string::npos);
  EXPECT_NE(load_text("one_field", "#version: 0.2\nab\n#attn-bpe-end 1\n").find(":2: expected a merge"),
            std::string::npos);
  // "ab" is no character and no earlier merge made it.
  EXPECT_NE(load_text("unknown", "#version: 0.2\nab c</w>\n#attn-bpe-end 1\n").find("neither a character"),
            std::string::npos);
  EXPECT_NE(load_text("twice", "#version: 0.2\na b\na b\n#attn-bpe-end 2\n").find("appears twice"),
            std::string::npos);
  EXPECT_NE(load_text("after_end", "#version: 0.2\na b\n#attn-bpe-end 1\nc d\n").find("after the end line"),
            std::string::npos);
  EXPECT_NE(error_of([] { Bpe::load("/nonexistent/codes.bpe"); }).find("cannot open"), std::string::npos);
}

TEST(Bpe, LearningIsDeterministic) {
  const std::vector<std::string> lines = {"der Vertrag wurde gestern unterzeichnet .",
                                          "the contract was signed yesterday .", "der Vertrag ist gut ."};
  EXPECT_EQ(Bpe::learn(lines, 30).merge_list(), Bpe::learn(lines, 30).merge_list());
  const Bpe bpe = Bpe::learn(lines, 30);
  for (const std::string& line : lines) EXPECT_EQ(Bpe::decode(bpe.encode(line)), line);
}

TEST(Pretokenize, SplitsPunctuationButKeepsWordsWhole) {
  using Words = std::vector<std::string>;
  EXPECT_EQ(pretokenize("She said: \"We will come tomorrow.\""),
            (Words{"She", "said", ":", "\"", "We", "will", "come", "tomorrow", ".", "\""}));
  // Inner apostrophes and hyphens, and digit groups, stay inside the word.
  EXPECT_EQ(pretokenize("it's well-known; 3.5% of 1,000."),
            (Words{"it's", "well-known", ";", "3.5", "%", "of", "1,000", "."}));
  EXPECT_EQ(pretokenize("'quoted' -5 (x)"), (Words{"'", "quoted", "'", "-", "5", "(", "x", ")"}));
  EXPECT_EQ(pretokenize("Grüße\xc2\xa0" "aus Köln!"), (Words{"Grüße", "aus", "Köln", "!"}));
  EXPECT_TRUE(pretokenize("  \t ").empty());
}

TEST(Pretokenize, DetokenizeUndoesIt) {
  for (const std::string s : {"She said: \"We will come tomorrow.\"", "it's well-known; 3.5% of 1,000.",
                              "Prices (in euros) rose, then fell!", "He called it 'odd' and left."})
    EXPECT_EQ(detokenize(pretokenize(s)), s) << s;
}

TEST(Pretokenize, DetokenizeUnitsJoinsSubwordsFirst) {
  EXPECT_EQ(detokenize_units({"Sie", "sag@@", "te", ":", "\"", "Wir", "kom@@", "men", ".", "\""}),
            "Sie sagte: \"Wir kommen.\"");
}

TEST(BpeCommand, LearnsAndApplies) {
  const std::string corpus = scratch_path("corpus.txt"), codes = scratch_path("codes.bpe"), out = scratch_path("out");
  std::ofstream(corpus) << "ab ab\nab abc bc\n";
  ::testing::internal::CaptureStdout();
  ASSERT_EQ(run_bpe_command({"--learn", corpus, "--merges", "10", "--codes", codes}), 0);
  ASSERT_EQ(run_bpe_command({"--apply", corpus, "--codes", codes, "--out", out}), 0);
  ::testing::internal::GetCapturedStdout();
  // The merges of LearnsTheHandDerivedMerges, applied to the corpus itself.
  EXPECT_EQ(Bpe::load(codes).merge_list(), (Merges{{"a", "b</w>"}, {"b", "c</w>"}}));
  EXPECT_EQ(text::read_lines("test", out), (std::vector<std::string>{"ab ab", "ab a@@ bc bc"}));
  // Nothing written is replaced without --overwrite; bad combinations are refused.
  EXPECT_NE(error_of<UsageError>([&] { run_bpe_command({"--learn", corpus, "--codes", codes}); }).find("exists"),
            std::string::npos);
  EXPECT_NE(error_of<UsageError>([&] { run_bpe_command({"--codes", codes}); }).find("exactly one of"),
            std::string::npos);
  EXPECT_NE(error_of<UsageError>([&] { run_bpe_command({"--apply", corpus, "--codes", codes}); }).find("needs --out"),
            std::string::npos);
  EXPECT_NE(error_of<UsageError>([&] {
              run_bpe_command({"--learn", corpus + ",", "--codes", scratch_path("new.bpe")});
            }).find("empty file name"),
            std::string::npos);
  EXPECT_NE(error_of<UsageError>([&] {
              run_bpe_command({"--learn", corpus, "--merges", "-1", "--codes", scratch_path("new.bpe")});
            }).find("--merges"),
            std::string::npos);
}

}  // namespace
}  // namespace attn
