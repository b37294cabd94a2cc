// BLEU as sacreBLEU computes it (train/metrics_bleu.h). The 13a cases follow
// the tokenizer's rules step by step; the BLEU cases are computed by hand
// from the definition (the arithmetic is in the comments).
#include <gtest/gtest.h>

#include <cmath>

#include "attn/train/metrics_bleu.h"
#include "attn/train/text/mteval_entities.h"
#include "attn/util/text.h"
#include "test_util.h"

namespace attn {
namespace {

TEST(Bleu, Tokenize13aSplitsSymbolsAndPunctuation) {
  EXPECT_EQ(tokenize_13a("Hello, world!"), "Hello , world !");
  // '$' is a symbol; '.' between digits stays, ',' before a space and the
  // final '.' (after a letter) split off.
  EXPECT_EQ(tokenize_13a("It costs $3.50, ok."), "It costs $ 3.50 , ok .");
  // '-' splits only after a digit; apostrophes never.
  EXPECT_EQ(tokenize_13a("1990-2000 well-known don't"), "1990 - 2000 well-known don't");
  EXPECT_EQ(tokenize_13a("(a+b)*c=d?"), "( a + b ) * c = d ?");
  EXPECT_EQ(tokenize_13a("A \"quoted\" [word]_{x}|y~z^w`v@u#t%s"),
            "A \" quoted \" [ word ] _ { x } | y ~ z ^ w ` v @ u # t % s");
  // Digits on both sides keep '.' and ',': nothing splits.
  EXPECT_EQ(tokenize_13a("50,000.5,1"), "50,000.5,1");
  // Rule 2 consumes "a." so the second '.' is split by rule 3 only before 'b'.
  EXPECT_EQ(tokenize_13a("a..b"), "a . . b");
  EXPECT_EQ(tokenize_13a("e.g. U.S.A."), "e . g . U . S . A .");
}

TEST(Bleu, Tokenize13aLanguageIndependentPart) {
  EXPECT_EQ(tokenize_13a("&quot;Hi&quot; &amp; bye"), "\" Hi \" & bye");
  EXPECT_EQ(tokenize_13a("a&lt;b&gt;c"), "a < b > c");
  EXPECT_EQ(tokenize_13a("a<skipped>b"), "ab");
  EXPECT_EQ(tokenize_13a("x-\ny\nz"), "xy z");  // "-\n" joins, "\n" spaces
  // A multi-byte letter before '.' is a non-digit like any other; U+00A0 is
  // whitespace to Python's split().
  EXPECT_EQ(tokenize_13a("Schön."), "Schön .");
  EXPECT_EQ(tokenize_13a("x\xc2\xa0y"), "x y");
  EXPECT_EQ(tokenize_13a("   "), "");
}

TEST(Bleu, EntitiesUnescapeInMtevalsOrder) {
  // &quot; first, then &amp;: "&amp;quot;" becomes "&quot;" and stays so.
  EXPECT_EQ(unescape_mteval_entities("&amp;quot; &lt;b&gt; &apos;"), "&quot; <b> &apos;");
  EXPECT_EQ(text::replace_all("aaa", "aa", "b"), "ba");  // left to right, no overlap
  EXPECT_EQ(text::replace_all("abc", "", "x"), "abc");
}

TEST(Bleu, IdenticalSentencesScore100) {
  // 6 tokens: 6/6, 5/5, 4/4, 3/3 n-grams match, BP 1.
  const BleuScore s = corpus_bleu({"the cat sat on the mat"}, {"the cat sat on the mat"});
  EXPECT_NEAR(s.bleu, 100, 1e-9);
  EXPECT_EQ(s.hyp_len, 6);
  EXPECT_EQ(s.ref_len, 6);
  EXPECT_EQ(s.brevity_penalty, 1.0);
}

TEST(Bleu, ClipsCountsAndSmoothsZeroMatches) {
  // hyp "the the the the", ref "the cat sat on the mat".
  // 1-grams: "the" x4 in hyp, x2 in ref -> correct min(4, 2) = 2 of 4: p1 = 50.
  // 2-grams "the the" x3, 3-grams x2, 4-grams x1: none in ref. 'exp'
  // smoothing: p2 = 100 / (2 * 3), p3 = 100 / (4 * 2), p4 = 100 / (8 * 1).
  // BP = exp(1 - 6/4) = exp(-0.5).
  const BleuScore s = corpus_bleu({"the the the the"}, {"the cat sat on the mat"});
  EXPECT_DOUBLE_EQ(s.precisions[0], 50.0);
  EXPECT_DOUBLE_EQ(s.precisions[1], 100.0 / 6);
  EXPECT_DOUBLE_EQ(s.precisions[2], 12.5);
  EXPECT_DOUBLE_EQ(s.precisions[3], 12.5);
  EXPECT_DOUBLE_EQ(s.brevity_penalty, std::exp(-0.5));
  const double expected = std::exp(-0.5) * std::exp((std::log(50.0) + std::log(100.0 / 6) + 2 * std::log(12.5)) / 4);
  EXPECT_NEAR(s.bleu, expected, 1e-9);  // = 11.52...
  EXPECT_NEAR(s.bleu, 11.522, 1e-3);
}

TEST(Bleu, LongerHypothesisHasNoBrevityPenalty) {
  // hyp 7 tokens, ref 6: BP 1. Matches 6/7, 5/6, 4/5, 3/4, whose product is
  // 3/7: BLEU = 100 * (3/7)^(1/4) = 80.91...
  const BleuScore s = corpus_bleu({"the cat sat on the mat today"}, {"the cat sat on the mat"});
  EXPECT_EQ(s.brevity_penalty, 1.0);
  EXPECT_NEAR(s.bleu, 100 * std::pow(3.0 / 7, 0.25), 1e-9);
}

TEST(Bleu, EmptyHypothesisScoresZero) {
  const BleuScore s = corpus_bleu({""}, {"a b c"});
  EXPECT_EQ(s.bleu, 0);
  EXPECT_EQ(s.brevity_penalty, 0);  // hyp_len 0
  EXPECT_EQ(s.hyp_len, 0);
  EXPECT_EQ(s.ref_len, 3);
  for (double p : s.precisions) EXPECT_EQ(p, 0);
}

TEST(Bleu, CountsAddUpOverTheCorpus) {
  // "a b" alone has no 3- or 4-grams (BLEU 0), but the corpus with
  // "c d e f" has 6/6, 4/4, 2/2, 1/1 matches: 100.
  EXPECT_EQ(corpus_bleu({"a b"}, {"a b"}).bleu, 0);
  EXPECT_NEAR(corpus_bleu({"a b", "c d e f"}, {"a b", "c d e f"}).bleu, 100, 1e-9);
  // Without any 4-gram in the corpus the loop stops at order 4: p4 stays 0,
  // BLEU 0, though the lower orders match fully.
  const BleuScore s = corpus_bleu({"a b c"}, {"a b c"});
  EXPECT_EQ(s.bleu, 0);
  EXPECT_DOUBLE_EQ(s.precisions[2], 100);
  EXPECT_EQ(s.precisions[3], 0);
}

TEST(Bleu, TokenisesBeforeCounting) {
  // 13a makes both "Hello , world !" (4 tokens), so they match fully; the
  // trailing space of the hypothesis is stripped.
  EXPECT_NEAR(corpus_bleu({"Hello, world! "}, {"Hello , world!"}).bleu, 100, 1e-9);
}

TEST(Bleu, RefusesUnequalCounts) {
  EXPECT_NE(testing_support::error_of([] { corpus_bleu({"a"}, {"a", "b"}); }).find("1 hypotheses but 2 references"),
            std::string::npos);
}

TEST(Bleu, FormatsLikeSacreBleu) {
  const BleuScore s = corpus_bleu({"the the the the"}, {"the cat sat on the mat"});
  EXPECT_EQ(format_bleu(s), "BLEU = 11.52 50.0/16.7/12.5/12.5 (BP = 0.607 ratio = 0.667 hyp_len = 4 ref_len = 6)");
}

}  // namespace
}  // namespace attn
