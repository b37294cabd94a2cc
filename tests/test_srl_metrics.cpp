// SRL argument scoring (train/srl_metrics.h) on hand-made propositions whose
// srl-eval.pl counts are worked out by hand: the BIO-to-phrase conversion of
// Tan et al.'s scripts, C- pieces joined to their argument, R- arguments on
// their own, V never counted.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "attn/engine/error.h"
#include "attn/train/srl_metrics.h"
#include "test_util.h"

namespace attn {
namespace {

using Tags = std::vector<std::string>;

std::vector<std::pair<std::string, std::pair<int64_t, int64_t>>> phrases_of(const Tags& tags) {
  std::vector<std::pair<std::string, std::pair<int64_t, int64_t>>> out;
  for (const SrlPhrase& p : srl_phrases(tags)) out.push_back({p.type, {p.begin, p.end}});
  return out;
}

using Phrases = std::vector<std::pair<std::string, std::pair<int64_t, int64_t>>>;

TEST(SrlPhrases, BAndITagsMakeSpansEndingAtOOrB) {
  EXPECT_EQ(phrases_of({"B-A0", "I-A0", "B-V", "O", "B-A1"}),
            (Phrases{{"A0", {0, 2}}, {"V", {2, 3}}, {"A1", {4, 5}}}));
}

TEST(SrlPhrases, AnIWithoutItsBOpensASpanOfItsType) {
  EXPECT_EQ(phrases_of({"O", "I-A1", "I-A1", "B-V"}), (Phrases{{"A1", {1, 3}}, {"V", {3, 4}}}));
  EXPECT_EQ(phrases_of({"I-A0", "B-V"}), (Phrases{{"A0", {0, 1}}, {"V", {1, 2}}}));
}

TEST(SrlPhrases, AnIOfAnotherTypeContinuesTheOpenSpanAsTanEtAlConvertIt) {
  EXPECT_EQ(phrases_of({"B-A0", "I-A1", "I-A1", "B-V"}), (Phrases{{"A0", {0, 3}}, {"V", {3, 4}}}));
}

TEST(SrlPhrases, ASpanAtTheSentenceEndIsClosed) {
  EXPECT_EQ(phrases_of({"B-V", "B-A1", "I-A1"}), (Phrases{{"V", {0, 1}}, {"A1", {1, 3}}}));
  EXPECT_TRUE(srl_phrases({}).empty());
  EXPECT_TRUE(srl_phrases({"O", "O"}).empty());
}

TEST(SrlPhrases, ATagThatIsNotBioIsAnError) {
  EXPECT_THAT(testing_support::error_of([] { srl_phrases({"B-A0", "S-A1"}); }), ::testing::HasSubstr("'S-A1'"));
}

TEST(SrlArguments, ContinuationJoinsTheLatestArgumentOfItsType) {
  // [A1 The firm] , [A0 it] [V said] , [C-A1 would grow] .
  const Tags tags = {"B-A1", "I-A1", "O", "B-A0", "B-V", "O", "B-C-A1", "I-C-A1", "O"};
  const std::vector<SrlArgument> args = srl_arguments(tags);
  ASSERT_EQ(args.size(), 3u);
  EXPECT_EQ(args[0], (SrlArgument{"A1", {{0, 2}, {6, 8}}}));
  EXPECT_EQ(args[1], (SrlArgument{"A0", {{3, 4}}}));
  EXPECT_EQ(args[2], (SrlArgument{"V", {{4, 5}}}));
}

TEST(SrlArguments, ContinuationWithoutItsHeadBecomesTheArgumentAndReferencesStayApart) {
  const std::vector<SrlArgument> args = srl_arguments({"B-R-A0", "B-V", "B-C-A1", "I-C-A1"});
  ASSERT_EQ(args.size(), 3u);
  EXPECT_EQ(args[0], (SrlArgument{"R-A0", {{0, 1}}}));
  EXPECT_EQ(args[2], (SrlArgument{"A1", {{2, 4}}}));
}

TEST(SrlScores, CountsLikeSrlEval) {
  // Gold: A0 [0,2), V [2,3), A1 [3,5), AM-TMP [5,6).
  const Tags gold = {"B-A0", "I-A0", "B-V", "B-A1", "I-A1", "B-AM-TMP"};
  // Pred: A0 right, V right (not counted), A1 too short (excess and missed),
  // AM-TMP labelled AM-LOC (excess and missed).
  const Tags pred = {"B-A0", "I-A0", "B-V", "B-A1", "O", "B-AM-LOC"};
  const SrlScores s = srl_scores({gold}, {pred});
  EXPECT_EQ(s.correct, 1);
  EXPECT_EQ(s.excess, 2);
  EXPECT_EQ(s.missed, 2);
  EXPECT_DOUBLE_EQ(s.precision, 1.0 / 3.0);
  EXPECT_DOUBLE_EQ(s.recall, 1.0 / 3.0);
  EXPECT_DOUBLE_EQ(s.f1, 1.0 / 3.0);
}

TEST(SrlScores, ADiscontinuousArgumentIsRightOnlyWithAllItsPieces) {
  const Tags gold = {"B-A1", "I-A1", "O", "B-A0", "B-V", "O", "B-C-A1", "I-C-A1", "O"};
  // The continuation missed: the A1 is one piece, so it is wrong; A0 right.
  const Tags missed_piece = {"B-A1", "I-A1", "O", "B-A0", "B-V", "O", "O", "O", "O"};
  SrlScores s = srl_scores({gold}, {missed_piece});
  EXPECT_EQ(s.correct, 1);
  EXPECT_EQ(s.excess, 1);
  EXPECT_EQ(s.missed, 1);
  // Predicted as two separate A1 arguments: one argument of two pieces is
  // not two arguments.
  const Tags split = {"B-A1", "I-A1", "O", "B-A0", "B-V", "O", "B-A1", "I-A1", "O"};
  s = srl_scores({gold}, {split});
  EXPECT_EQ(s.correct, 1);
  EXPECT_EQ(s.excess, 2);
  EXPECT_EQ(s.missed, 1);
  // Exactly right.
  s = srl_scores({gold}, {gold});
  EXPECT_EQ(s.correct, 2);
  EXPECT_EQ(s.excess + s.missed, 0);
  EXPECT_DOUBLE_EQ(s.f1, 1.0);
}

TEST(SrlScores, OverPropositionsAndWithNothingToFind) {
  // Two propositions: one right argument of two gold; a proposition without
  // arguments (only V) adds nothing.
  const SrlScores s = srl_scores({{"B-A0", "B-V", "B-A1"}, {"O", "B-V"}}, {{"B-A0", "B-V", "O"}, {"O", "B-V"}});
  EXPECT_EQ(s.correct, 1);
  EXPECT_EQ(s.excess, 0);
  EXPECT_EQ(s.missed, 1);
  EXPECT_DOUBLE_EQ(s.precision, 1.0);
  EXPECT_DOUBLE_EQ(s.recall, 0.5);
  EXPECT_DOUBLE_EQ(s.f1, 2.0 / 3.0);
  const SrlScores none = srl_scores({{"B-V"}}, {{"B-V"}});
  EXPECT_EQ(none.precision + none.recall + none.f1, 0.0);
}

TEST(SrlScores, PropositionsOfDifferentLengthsAreAnError) {
  EXPECT_THAT(testing_support::error_of([] { srl_scores({{"B-V", "O"}}, {{"B-V"}}); }),
              ::testing::HasSubstr("proposition 0 has 2 gold tags but 1 predicted"));
}

}  // namespace
}  // namespace attn
