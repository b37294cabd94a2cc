// Bad input that used to get through the data loaders (issue 11, items 8-12):
// each test feeds what a new user might, and asserts a clear error naming the
// file and line, or the correct reading of valid data.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <set>

#include "attn/nn/glove.h"
#include "attn/train/data/formats/loader_util.h"
#include "attn/train/data/formats/loaders.h"
#include "attn/train/data/task_data.h"
#include "test_data_util.h"

namespace attn {
namespace {

using ::testing::Not;
using namespace test_data;

const std::string kBom = "\xEF\xBB\xBF";

std::string trec_lines(int n) {
  std::string text;
  for (int i = 0; i < n; ++i) text += std::string(i % 2 ? "NUM:date" : "HUM:ind") + " question " + std::to_string(i) + " ?\n";
  return text;
}

// ---- 8. TREC has no dev set: one is split off train ----

TEST(DataBadInput, TrecSplitsDevOffTrain) {
  std::string dir = fresh_dir();
  std::string train = write(dir, "train.txt", trec_lines(40));
  std::string test = write(dir, "test.txt", "HUM:ind Who ?\n");
  Dataset d = load_trec(train, test, false);
  EXPECT_EQ(d.train.size(), 36u);
  EXPECT_EQ(d.dev.size(), 4u);
  EXPECT_EQ(d.test.size(), 1u);
  std::set<std::string> seen;  // token 1 is the question number: train and dev partition the file
  for (const auto* part : {&d.train, &d.dev})
    for (const Example& e : *part) seen.insert(e.tokens.at(1));
  EXPECT_EQ(seen.size(), 40u);
  Dataset again = load_trec(train, test, true);
  ASSERT_EQ(again.dev.size(), d.dev.size());
  for (size_t i = 0; i < d.dev.size(); ++i) EXPECT_EQ(again.dev[i].tokens, d.dev[i].tokens);  // fixed seed

  for (const char* format : {"trec", "trec-fine"}) {
    DataSpec spec;
    spec.data = dir;
    spec.format = format;
    Dataset via_cli = load_task_data(spec);
    EXPECT_FALSE(via_cli.dev.empty()) << format;
    EXPECT_FALSE(via_cli.test.empty()) << format;
  }
}

// ---- 9. tag sets: BIO validated at load; quoted input is capped ----

TEST(DataBadInput, TaggingRejectsUnprefixedTagInChunkSet) {
  std::string dir = fresh_dir();
  std::string train = write(dir, "train.tsv", "John\tB-PER\nSmith\tI-PER\nsaw\tO\nParis\tLOC\n\nHe\tO\n");
  write(dir, "test.tsv", "a\tO\n");
  std::string err = error_of([&] { load_tagging_dir(dir); });
  EXPECT_THAT(err, HasSubstr(train + ":4: tag 'LOC'"));
  EXPECT_THAT(err, HasSubstr("chunk tag set"));
  // In the dev file too.
  write(dir, "train.tsv", "John\tB-PER\nSmith\tI-PER\n");
  std::string dev = write(dir, "dev.tsv", "Jo\tB-PER\nSmith\tPER\n");
  EXPECT_THAT(error_of([&] { load_tagging_dir(dir); }), HasSubstr(dev + ":2: tag 'PER'"));
  // A tag set with no chunk tag at all (POS tags) is fine, as are BIO and BIOES.
  write(dir, "dev.tsv", "Jo\tB-PER\nSmith\tI-PER\nran\tO\n");
  EXPECT_EQ(load_tagging_dir(dir).label_names, (Tokens{"B-PER", "I-PER", "O"}));
  write(dir, "dev.tsv", "Jo\tB-PER\nSmith\tE-PER\nParis\tS-LOC\n");
  EXPECT_EQ(load_tagging_dir(dir).label_names, (Tokens{"B-PER", "E-PER", "I-PER", "O", "S-LOC"}));
  write(dir, "train.tsv", "The\tDET\ncat\tNOUN\n");
  write(dir, "dev.tsv", "a\tDET\n");
  write(dir, "test.tsv", "a\tDET\n");
  EXPECT_EQ(load_tagging_dir(dir).label_names, (Tokens{"DET", "NOUN"}));
}

TEST(DataBadInput, QuoteCapsLongInputAndShowsInvisibleBytes) {
  using loader_util::quote;
  EXPECT_EQ(quote("B-PER"), "'B-PER'");
  EXPECT_EQ(quote(" 1"), "' 1'");
  EXPECT_EQ(quote("a\tb\r"), "'a\\tb\\r'");
  std::string huge(10 << 20, 'x');
  std::string q = quote(huge);
  EXPECT_LT(q.size(), 120u);
  EXPECT_THAT(q, HasSubstr("10485760 bytes"));
  // Never cuts a UTF-8 sequence in half.
  std::string accents;
  for (int i = 0; i < 100; ++i) accents += "\xC3\xA9";
  std::string qa = quote(accents);
  EXPECT_THAT(qa, HasSubstr("\xC3\xA9..."));
}

TEST(DataBadInput, ErrorsQuoteAtMostAFewDozenBytesOfInput) {
  std::string dir = fresh_dir();
  std::string column(1 << 20, 'x');  // a 1 MB CoNLL column (the issue met 10 MB)
  write(dir, "train.conll", "John NNP B-PER\nParis NNP " + column + "\n");
  write(dir, "test.conll", "a DT O\n");
  std::string err = error_of([&] { load_tagging_dir(dir); });
  EXPECT_THAT(err, HasSubstr("train.conll:2: tag 'xxx"));
  EXPECT_LT(err.size(), 1000u);

  std::string trec = write(dir, "trec.txt", "N" + column + "1:date When ?\n");
  err = error_of([&] { load_trec(trec, trec, false); });
  EXPECT_THAT(err, HasSubstr(trec + ":1: coarse label"));
  EXPECT_LT(err.size(), 1000u);

  std::string nli = write(dir, "nli.jsonl", R"({"gold_label": ")" + column + R"(", "sentence1": "A", "sentence2": "B"})");
  err = error_of([&] { load_snli_jsonl(nli, "", ""); });
  EXPECT_THAT(err, HasSubstr(nli + ":1: unknown gold_label"));
  EXPECT_LT(err.size(), 1000u);

  std::string sick = write(dir, "sick.txt", "sentence_A\tsentence_B\trelatedness_score\na\tb\t" + column + "\n");
  err = error_of([&] { load_sick(sick, sick, sick); });
  EXPECT_THAT(err, HasSubstr(sick + ":2: relatedness_score"));
  EXPECT_LT(err.size(), 1000u);

  write(dir, "train.txt", "(" + column + " (2 a))\n");
  write(dir, "dev.txt", "");
  write(dir, "test.txt", "");
  err = error_of([&] { load_sst(dir, false, 5); });
  EXPECT_THAT(err, HasSubstr("label must be 0..4"));
  EXPECT_LT(err.size(), 1000u);
}

// ---- 10. phantom classes: BOM, header rows, near-duplicate labels ----

TEST(DataBadInput, ByteOrderMarkIsStrippedEverywhere) {
  std::string dir = fresh_dir();
  write(dir, "cls/train.tsv", kBom + "1\tgood\n0\tbad\n");
  write(dir, "cls/dev.tsv", kBom + "0\tworse\n");
  write(dir, "cls/test.tsv", kBom + "1\tfine\n");
  Dataset c = load_classification_tsv_dir(dir + "/cls");
  EXPECT_THAT(c.label_names, ElementsAre("0", "1"));

  write(dir, "tag/train.tsv", kBom + "The\tDET\n");
  write(dir, "tag/test.tsv", kBom + "a\tDET\n");
  Dataset t = load_tagging_dir(dir + "/tag");
  EXPECT_EQ(t.train.at(0).tokens, (Tokens{"the"}));

  std::string trec = write(dir, "trec.txt", kBom + "NUM:date When ?\nHUM:ind Who ?\n");
  EXPECT_THAT(load_trec(trec, trec, false).label_names, ElementsAre("HUM", "NUM"));

  std::string nli = write(dir, "nli.jsonl", kBom + R"({"gold_label": "neutral", "sentence1": "A", "sentence2": "B"})");
  EXPECT_EQ(load_snli_jsonl(nli, "", "").train.size(), 1u);

  std::string sick = write(dir, "sick.txt", kBom + "sentence_A\tsentence_B\trelatedness_score\na\tb\t3\n");
  EXPECT_EQ(load_sick(sick, sick, sick).train.size(), 1u);

  write(dir, "sst/train.txt", kBom + "(3 (2 It) (4 good))\n");
  write(dir, "sst/dev.txt", kBom + "(3 (2 It) (4 good))\n");
  write(dir, "sst/test.txt", kBom + "(3 (2 It) (4 good))\n");
  EXPECT_EQ(load_sst(dir + "/sst", false, 5).train.size(), 1u);

  std::string line = write(dir, "pos.txt", kBom + "\xEF\xBB\xBFgreat\n");  // one BOM stripped, the second is text
  EXPECT_EQ(load_sentence_per_line("x", {{"pos", line}}).train.at(0).tokens, (Tokens{"great"}));
}

TEST(DataBadInput, LabelsDifferingOnlyByWhitespaceOrZerosAreRefused) {
  std::string dir = fresh_dir();
  std::string train = write(dir, "train.tsv", "1\tgood\n0\tbad\n 1\tnice\n");
  write(dir, "test.tsv", "1\tfine\n");
  std::string err = error_of([&] { load_classification_tsv_dir(dir); });
  EXPECT_THAT(err, HasSubstr("'1' (" + train + ":1)"));
  EXPECT_THAT(err, HasSubstr("' 1' (" + train + ":3)"));
  EXPECT_THAT(err, HasSubstr("--allow-similar-labels"));

  std::string test = write(dir, "test.tsv", "01\tfine\n");
  write(dir, "train.tsv", "1\tgood\n0\tbad\n");
  err = error_of([&] { load_classification_tsv_dir(dir); });
  EXPECT_THAT(err, HasSubstr("'1' (" + train + ":1)"));
  EXPECT_THAT(err, HasSubstr("'01' (" + test + ":1)"));

  // The flag keeps them as distinct classes, as before (equal numbers in byte order).
  EXPECT_THAT(load_classification_tsv_dir(dir, true).label_names, ElementsAre("0", "01", "1"));

  // Pair files and tags follow the same rule.
  write(dir, "pair/train.tsv", "yes\ta\tb\nyes \tc\td\n");
  write(dir, "pair/test.tsv", "yes\ta\tb\n");
  EXPECT_THAT(error_of([&] { load_pair_tsv_dir(dir + "/pair"); }), HasSubstr("'yes ' ("));
  write(dir, "tag/train.tsv", "a\tNOUN\nb\tNOUN \n");
  write(dir, "tag/test.tsv", "a\tNOUN\n");
  EXPECT_THAT(error_of([&] { load_tagging_dir(dir + "/tag"); }), HasSubstr("'NOUN ' ("));
}

TEST(DataBadInput, HeaderRowIsRefused) {
  std::string dir = fresh_dir();
  std::string train = write(dir, "train.tsv", "label\ttext\n1\tgood\n0\tbad\n");
  write(dir, "test.tsv", "1\tfine\n");
  std::string err = error_of([&] { load_classification_tsv_dir(dir); });
  EXPECT_THAT(err, HasSubstr(train + ":1:"));
  EXPECT_THAT(err, HasSubstr("header"));
  // A non-numeric first label among numbers, seen once, is a header too.
  write(dir, "train.tsv", "stars\treview\n1\tgood\n0\tbad\n");
  EXPECT_THAT(error_of([&] { load_classification_tsv_dir(dir); }), HasSubstr(train + ":1:"));
  write(dir, "tag/train.tsv", "token\ttag\nThe\tDET\n");
  write(dir, "tag/test.tsv", "a\tDET\n");
  EXPECT_THAT(error_of([&] { load_tagging_dir(dir + "/tag"); }), HasSubstr("header"));
  // A class that is really named like a header word and used more than once is data.
  write(dir, "train.tsv", "label\tx\nother\ty\nlabel\tz\n");
  EXPECT_THAT(load_classification_tsv_dir(dir).label_names, ElementsAre("1", "label", "other"));
}

// ---- 11. --task tag on a classification TSV ----

TEST(DataBadInput, TaggingRefusesClassificationTsv) {
  std::string dir = fresh_dir();
  std::string train = write(dir, "train.tsv", "1\tGood stuff , really .\n0\tbad\n1\tnice one\n");
  write(dir, "test.tsv", "1\tfine\n");
  std::string err = error_of([&] { load_tagging_dir(dir); });
  EXPECT_THAT(err, HasSubstr(train + ":1:"));
  EXPECT_THAT(err, HasSubstr("label<TAB>text"));
  // One-word texts: the "tags" outnumber the "tokens" (labels) many times over.
  std::string many;
  for (int i = 0; i < 60; ++i) many += std::string(i % 2 ? "pos" : "neg") + "\tword" + std::to_string(i) + "\n";
  write(dir, "train.tsv", many);
  EXPECT_THAT(error_of([&] { load_tagging_dir(dir); }), HasSubstr("label<TAB>text"));
}

// ---- 12. GloVe values; CR-only line ends ----

TEST(DataBadInput, GloveRejectsNonFiniteAndHugeValues) {
  std::string dir = fresh_dir();
  for (const char* bad : {"nan", "NaN", "inf", "-inf", "3e38", "-1e7", "1e39"}) {
    std::string path = write(dir, "g.txt", std::string("the 0.1 0.2\ncat 0.3 0.4\ndog 0.5 ") + bad + "\n");
    std::string err = error_of([&] { load_glove(path); });
    EXPECT_THAT(err, HasSubstr(path + ":3:")) << bad;
    EXPECT_THAT(err, HasSubstr("'dog'")) << bad;
    EXPECT_THAT(err, Not(HasSubstr("not a number"))) << bad;
  }
}

TEST(DataBadInput, GloveAcceptsSubnormalsAndCrLineEnds) {
  std::string dir = fresh_dir();
  std::string path = write(dir, "g.txt", "the 1e-40 -2.5\ncat 1e-50 1e6\n");
  GloveVectors g = load_glove(path);
  ASSERT_EQ(g.vectors.count("the"), 1u);
  EXPECT_GT(g.vectors["the"][0], 0.0f);
  EXPECT_LT(g.vectors["the"][0], FLT_MIN);  // kept as a subnormal float
  EXPECT_EQ(g.vectors["cat"][0], 0.0f);     // below the subnormals: rounds to zero
  EXPECT_EQ(g.vectors["cat"][1], 1e6f);

  std::string cr = write(dir, "cr.txt", kBom + "the 0.1 0.2\rcat 0.3 0.4\rdog 0.5 0.6\r");
  GloveVectors c = load_glove(cr);
  EXPECT_EQ(c.dim, 2);
  EXPECT_EQ(c.vectors.size(), 3u);
  EXPECT_EQ(c.vectors["dog"][1], 0.6f);
  std::string bad_cr = write(dir, "badcr.txt", "the 0.1 0.2\rcat 0.3\r");
  EXPECT_THAT(error_of([&] { load_glove(bad_cr); }), HasSubstr(bad_cr + ":2:"));
}

TEST(DataBadInput, TextLoadersAcceptCrOnlyLineEnds) {
  std::string dir = fresh_dir();
  write(dir, "cls/train.tsv", "1\tgood\r0\tbad\r1\tnice\r");
  std::string test = write(dir, "cls/test.tsv", "1\tfine\r0\tno\r");
  Dataset c = load_classification_tsv_dir(dir + "/cls");
  EXPECT_EQ(c.train.size() + c.dev.size(), 3u);
  EXPECT_EQ(c.test.size(), 2u);
  EXPECT_EQ(c.test[1].tokens, (Tokens{"no"}));

  write(dir, "tag/train.tsv", "The\tDET\rcat\tNOUN\r\rsat\tVERB\r");
  write(dir, "tag/test.tsv", "a\tDET\r");
  Dataset t = load_tagging_dir(dir + "/tag");
  EXPECT_EQ(t.train.size() + t.dev.size(), 2u);

  // Line numbers count CR-only lines too.
  write(dir, "cls/test.tsv", "1\tfine\r0\tno\rbroken\r");
  EXPECT_THAT(error_of([&] { load_classification_tsv_dir(dir + "/cls"); }), HasSubstr(test + ":3:"));

  DataSpec spec;
  spec.data = dir + "/cls";
  write(dir, "cls/test.tsv", "1\tfine\r0\tno\r");
  EXPECT_FALSE(load_task_data(spec).train.empty());
}

}  // namespace
}  // namespace attn
