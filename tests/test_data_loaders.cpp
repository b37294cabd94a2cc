// Every dataset loader on small fixture files, and every loader's error for
// a malformed line naming the file and the line number.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "attn/train/data/formats/loaders.h"
#include "attn/train/data/task_data.h"
#include "test_data_util.h"

namespace attn {
namespace {

using namespace test_data;

// ---- SNLI / MultiNLI ----

TEST(DataLoaders, CrossValidationFormatsTestOnTheChosenFold) {
  // SentEval's CR layout: one file per class. The ten test folds partition
  // the data; train, dev and test of one fold are disjoint.
  const std::string dir = fresh_dir();
  std::string neg, pos;
  for (int i = 0; i < 25; ++i) {
    neg += "bad thing number " + std::to_string(i) + "\n";
    pos += "good thing number " + std::to_string(i) + "\n";
  }
  write(dir, "cr/custrev.neg", neg);
  write(dir, "cr/custrev.pos", pos);
  DataSpec spec;
  spec.data = dir + "/cr";
  spec.format = "cr";
  std::multiset<std::string> tested;
  for (int64_t fold = 0; fold < 10; ++fold) {
    spec.fold = fold;
    Dataset d = load_task_data(spec);
    EXPECT_EQ(d.label_names, (std::vector<std::string>{"negative", "positive"}));
    EXPECT_EQ(d.train.size() + d.dev.size() + d.test.size(), 50u);
    EXPECT_FALSE(d.dev.empty());
    auto key = [](const Example& e) { return std::to_string(e.label) + ":" + e.tokens.back(); };
    std::set<std::string> seen;
    for (const auto* split : {&d.train, &d.dev, &d.test})
      for (const Example& e : *split) seen.insert(key(e));
    EXPECT_EQ(seen.size(), 50u);  // the three splits are disjoint and cover everything
    for (const Example& e : d.test) tested.insert(key(e));
  }
  EXPECT_EQ(tested.size(), 50u);
  EXPECT_EQ(std::set<std::string>(tested.begin(), tested.end()).size(), 50u);  // every example tested exactly once
  spec.fold = 10;
  EXPECT_THAT(error_of([&] { load_task_data(spec); }), HasSubstr("--fold must be in [0, 9]"));
  spec.fold = 0;
  spec.format = "mpqa";
  EXPECT_THAT(error_of([&] { load_task_data(spec); }), HasSubstr("mpqa.neg"));
}

TEST(DataLoaders, SnliJsonlSkipsDashLabels) {
  std::string dir = fresh_dir();
  std::string train = write(dir, "train.jsonl",
                            R"({"gold_label": "entailment", "sentence1": "A man sleeps.", "sentence2": "A person rests."})"
                            "\n"
                            R"({"gold_label": "-", "sentence1": "Unclear.", "sentence2": "Who knows."})"
                            "\n\n"
                            R"({"sentence2": "Two.", "gold_label": "contradiction", "sentence1": "One.", "extra": [1]})"
                            "\n");
  std::string dev = write(dir, "dev.jsonl", R"({"gold_label": "neutral", "sentence1": "A", "sentence2": "B"})" "\n");
  Dataset d = load_snli_jsonl(train, dev, "");
  EXPECT_EQ(d.task, TaskKind::Pair);
  EXPECT_THAT(d.label_names, ElementsAre("entailment", "neutral", "contradiction"));
  ASSERT_EQ(d.train.size(), 2u);
  EXPECT_EQ(d.train[0].tokens, (Tokens{"a", "man", "sleeps", "."}));
  EXPECT_EQ(d.train[0].tokens_b, (Tokens{"a", "person", "rests", "."}));
  EXPECT_EQ(d.train[0].label, 0);
  EXPECT_EQ(d.train[1].label, 2);
  ASSERT_EQ(d.dev.size(), 1u);
  EXPECT_EQ(d.dev[0].label, 1);
  EXPECT_TRUE(d.test.empty());
}

TEST(DataLoaders, SnliJsonlErrorsNameFileAndLine) {
  std::string dir = fresh_dir();
  std::string ok = R"({"gold_label": "neutral", "sentence1": "A", "sentence2": "B"})";
  std::string broken = write(dir, "broken.jsonl", ok + "\n" + ok + "\n{\"gold_label\": \"neutral\", \n");
  EXPECT_THAT(error_of([&] { load_snli_jsonl(broken, "", ""); }), HasSubstr(broken + ":3: json:"));
  std::string missing = write(dir, "missing.jsonl", ok + "\n" + R"({"gold_label": "neutral", "sentence1": "A"})");
  EXPECT_THAT(error_of([&] { load_snli_jsonl(missing, "", ""); }), HasSubstr(missing + ":2: missing \"sentence2\""));
  std::string unknown = write(dir, "unknown.jsonl", R"({"gold_label": "maybe", "sentence1": "A", "sentence2": "B"})");
  EXPECT_THAT(error_of([&] { load_snli_jsonl(unknown, "", ""); }), HasSubstr(unknown + ":1: unknown gold_label"));
  EXPECT_THAT(error_of([&] { load_snli_jsonl(dir + "/nope.jsonl", "", ""); }),
              HasSubstr("cannot open " + dir + "/nope.jsonl"));
}

// ---- SST ----

const char* kSstTrain =
    "(3 (2 It) (4 (4 (2 's) (4 good)) (2 .)))\n"
    "(1 (1 Bad) (2 -LRB-sic-RRB-))\n"
    "(2 (2 Just) (2 fine))\n";

TEST(DataLoaders, SstSentencesAndPhrases) {
  std::string dir = fresh_dir();
  write(dir, "train.txt", kSstTrain);
  write(dir, "dev.txt", "(0 (0 Awful) (2 film))\n");
  write(dir, "test.txt", "(4 (4 Great) (2 -LRB-) (2 x) (2 -RRB-))\n");
  Dataset five = load_sst(dir, false, 5);
  EXPECT_EQ(five.label_names.size(), 5u);
  ASSERT_EQ(five.train.size(), 3u);
  EXPECT_EQ(five.train[0].tokens, (Tokens{"it", "'s", "good", "."}));
  EXPECT_EQ(five.train[0].label, 3);
  EXPECT_EQ(five.train[1].tokens, (Tokens{"bad", "-lrb-sic-rrb-"}));
  EXPECT_EQ(five.train[2].label, 2);
  EXPECT_EQ(five.dev[0].label, 0);
  EXPECT_EQ(five.test[0].tokens, (Tokens{"great", "(", "x", ")"}));

  Dataset two = load_sst(dir, false, 2);
  EXPECT_THAT(two.label_names, ElementsAre("negative", "positive"));
  ASSERT_EQ(two.train.size(), 2u);  // the neutral sentence is dropped
  EXPECT_EQ(two.train[0].label, 1);
  EXPECT_EQ(two.train[1].label, 0);
  EXPECT_EQ(two.dev[0].label, 0);

  // Every node of the training trees; dev/test stay whole sentences.
  Dataset phrases = load_sst(dir, true, 5);
  ASSERT_EQ(phrases.train.size(), 7u + 3u + 3u);
  EXPECT_EQ(phrases.train[0].tokens, (Tokens{"it", "'s", "good", "."}));
  EXPECT_EQ(phrases.train[1].tokens, (Tokens{"it"}));
  EXPECT_EQ(phrases.train[2].tokens, (Tokens{"'s", "good", "."}));
  EXPECT_EQ(phrases.train[2].label, 4);
  EXPECT_EQ(phrases.train[3].tokens, (Tokens{"'s", "good"}));
  EXPECT_EQ(phrases.dev.size(), 1u);
  Dataset phrases2 = load_sst(dir, true, 2);
  // Non-neutral nodes: (3 ...), (4 ...), (4 's good), (4 good), (1 ...), (1 Bad).
  EXPECT_EQ(phrases2.train.size(), 6u);
}

TEST(DataLoaders, SstErrorsNameFileAndLine) {
  std::string dir = fresh_dir();
  std::string train = write(dir, "train.txt", "(3 (2 ok) (2 fine))\n(3 (2 missing) (2 paren)\n");
  write(dir, "dev.txt", "");
  write(dir, "test.txt", "");
  EXPECT_THAT(error_of([&] { load_sst(dir, false, 5); }), HasSubstr(train + ":2: unbalanced parentheses"));
  write(dir, "train.txt", "(2 (2 a))\n\n(7 (2 b))\n");
  EXPECT_THAT(error_of([&] { load_sst(dir, false, 5); }), HasSubstr(train + ":3: label must be 0..4"));
  write(dir, "train.txt", "(2 (2 a)) extra\n");
  EXPECT_THAT(error_of([&] { load_sst(dir, false, 5); }), HasSubstr(train + ":1: unexpected text after the tree"));
  EXPECT_THAT(error_of([&] { load_sst(dir, false, 3); }), HasSubstr("classes must be 5 or 2"));
}

// ---- TREC ----

TEST(DataLoaders, TrecCoarseAndFine) {
  // One training question (too few to split a dev set off); the labelled
  // cases are in the test file, which is never split.
  std::string dir = fresh_dir();
  std::string train = write(dir, "train.label", "HUM:ind Who wrote Hamlet ?\n");
  std::string test = write(dir, "test.label",
                           "DESC:manner How did serfdom develop in and then leave Russia ?\n"
                           "NUM:date When was Ozzy Osbourne born ?\n"
                           "NUM:count How many colors are there ?\r\n");
  Dataset coarse = load_trec(train, test, false);
  EXPECT_THAT(coarse.label_names, ElementsAre("DESC", "HUM", "NUM"));
  ASSERT_EQ(coarse.test.size(), 3u);
  EXPECT_EQ(coarse.test[0].tokens.front(), "how");
  EXPECT_EQ(coarse.test[0].tokens.back(), "?");
  EXPECT_EQ(coarse.test[1].label, 2);
  ASSERT_EQ(coarse.train.size(), 1u);
  EXPECT_EQ(coarse.train[0].label, 1);
  EXPECT_TRUE(coarse.dev.empty());
  Dataset fine = load_trec(train, test, true);
  EXPECT_THAT(fine.label_names, ElementsAre("DESC:manner", "HUM:ind", "NUM:count", "NUM:date"));
  EXPECT_EQ(fine.test[1].label, 3);
  EXPECT_EQ(fine.test[2].label, 2);
  EXPECT_EQ(fine.test[2].tokens, (Tokens{"how", "many", "colors", "are", "there", "?"}));
}

TEST(DataLoaders, TrecErrorsNameFileAndLine) {
  std::string dir = fresh_dir();
  std::string train = write(dir, "train.label", "NUM:date When ?\nno label here\n");
  std::string test = write(dir, "test.label", "HUM:ind Who ?\n");
  EXPECT_THAT(error_of([&] { load_trec(train, test, false); }), HasSubstr(train + ":2: expected \"COARSE:fine text\""));
  std::string bad_test = write(dir, "test2.label", "HUM:ind Who ?\n\nHUM:\n");
  EXPECT_THAT(error_of([&] { load_trec(test, bad_test, true); }), HasSubstr(bad_test + ":3:"));
}

// ---- one sentence per line, 10-fold CV ----

TEST(DataLoaders, SentencePerLine) {
  std::string dir = fresh_dir();
  std::string pos = write(dir, "cr.pos", "Great camera !\n\nworks well\n");
  std::string neg = write(dir, "cr.neg", "it broke .\n");
  Dataset d = load_sentence_per_line("cr", {{"negative", neg}, {"positive", pos}});
  EXPECT_EQ(d.name, "cr");
  EXPECT_THAT(d.label_names, ElementsAre("negative", "positive"));
  ASSERT_EQ(d.train.size(), 3u);
  EXPECT_EQ(d.train[0].tokens, (Tokens{"it", "broke", "."}));
  EXPECT_EQ(d.train[0].label, 0);
  EXPECT_EQ(d.train[1].tokens, (Tokens{"great", "camera", "!"}));
  EXPECT_EQ(d.train[2].label, 1);
  EXPECT_TRUE(d.dev.empty());
  EXPECT_TRUE(d.test.empty());
}

TEST(DataLoaders, SentencePerLineErrorsNameFileAndLine) {
  std::string dir = fresh_dir();
  std::string good = write(dir, "a.txt", "fine\n");
  std::string binary = write(dir, "b.txt", std::string("ok\nok\nbad\0line\n", 16));
  EXPECT_THAT(error_of([&] { load_sentence_per_line("x", {{"a", good}, {"b", binary}}); }),
              HasSubstr(binary + ":3: NUL byte"));
  EXPECT_THAT(error_of([&] { load_sentence_per_line("x", {{"a", good}, {"b", dir + "/none"}}); }),
              HasSubstr("cannot open " + dir + "/none"));
}

TEST(DataLoaders, TenFoldSplitsPartitionAndStratify) {
  std::vector<Example> all;
  for (int i = 0; i < 103; ++i) {
    Example e;
    e.tokens = {"w" + std::to_string(i)};
    e.label = i < 73 ? 0 : 1;
    all.push_back(e);
  }
  auto folds = ten_fold_splits(all, 3);
  ASSERT_EQ(folds.size(), 10u);
  std::multiset<std::string> tested;
  for (const auto& [train, test] : folds) {
    EXPECT_EQ(train.size() + test.size(), all.size());
    EXPECT_GE(test.size(), 10u);
    EXPECT_LE(test.size(), 11u);
    int positives = 0;
    std::set<std::string> in_test;
    for (const Example& e : test) {
      tested.insert(e.tokens[0]);
      in_test.insert(e.tokens[0]);
      positives += e.label == 1;
    }
    EXPECT_GE(positives, 2);  // 30 positives over 10 folds: 3 each, give or take the deal
    EXPECT_LE(positives, 4);
    for (const Example& e : train) EXPECT_EQ(in_test.count(e.tokens[0]), 0u);
  }
  EXPECT_EQ(tested.size(), all.size());
  EXPECT_EQ(std::set<std::string>(tested.begin(), tested.end()).size(), all.size());  // each exactly once
  auto again = ten_fold_splits(all, 3);
  auto other = ten_fold_splits(all, 4);
  EXPECT_EQ(again[0].second.size(), folds[0].second.size());
  for (size_t i = 0; i < folds[0].second.size(); ++i)
    EXPECT_EQ(again[0].second[i].tokens, folds[0].second[i].tokens);
  bool differs = false;
  for (size_t f = 0; f < 10 && !differs; ++f)
    for (size_t i = 0; i < std::min(folds[f].second.size(), other[f].second.size()); ++i)
      differs = differs || folds[f].second[i].tokens != other[f].second[i].tokens;
  EXPECT_TRUE(differs);
}

// ---- SICK ----

TEST(DataLoaders, SickReadsColumnsByHeader) {
  std::string dir = fresh_dir();
  std::string header = "pair_ID\tsentence_A\tsentence_B\trelatedness_score\tentailment_judgment\n";
  std::string train = write(dir, "train.txt",
                            header + "1\tA group of kids is playing\tKids play\t4.5\tENTAILMENT\n" +
                                "2\tA man sings\tNobody sings\t1\tCONTRADICTION\n");
  std::string dev = write(dir, "dev.txt", "sentence_B\trelatedness_score\tsentence_A\nB side\t3.2\tA side\n");
  std::string test = write(dir, "test.txt", header);
  Dataset d = load_sick(train, dev, test);
  EXPECT_EQ(d.task, TaskKind::Relatedness);
  ASSERT_EQ(d.train.size(), 2u);
  EXPECT_EQ(d.train[0].tokens, (Tokens{"a", "group", "of", "kids", "is", "playing"}));
  EXPECT_EQ(d.train[0].tokens_b, (Tokens{"kids", "play"}));
  EXPECT_DOUBLE_EQ(d.train[0].score, 4.5);
  EXPECT_DOUBLE_EQ(d.train[1].score, 1.0);
  ASSERT_EQ(d.dev.size(), 1u);
  EXPECT_EQ(d.dev[0].tokens, (Tokens{"a", "side"}));
  EXPECT_DOUBLE_EQ(d.dev[0].score, 3.2);
  EXPECT_TRUE(d.test.empty());
}

TEST(DataLoaders, SickErrorsNameFileAndLine) {
  std::string dir = fresh_dir();
  std::string header = "pair_ID\tsentence_A\tsentence_B\trelatedness_score\n";
  std::string ok = write(dir, "ok.txt", header);
  std::string range = write(dir, "range.txt", header + "1\ta\tb\t3\n2\ta\tb\t5.5\n");
  EXPECT_THAT(error_of([&] { load_sick(range, ok, ok); }), HasSubstr(range + ":3: relatedness_score '5.5' is outside"));
  std::string fields = write(dir, "fields.txt", header + "1\ta\tb\n");
  EXPECT_THAT(error_of([&] { load_sick(ok, fields, ok); }), HasSubstr(fields + ":2: expected 4 tab-separated fields"));
  std::string nan = write(dir, "nan.txt", header + "1\ta\tb\tfour\n");
  EXPECT_THAT(error_of([&] { load_sick(ok, ok, nan); }), HasSubstr(nan + ":2: relatedness_score 'four' is not a number"));
  std::string no_header = write(dir, "noheader.txt", "1\ta\tb\t3\n");
  EXPECT_THAT(error_of([&] { load_sick(no_header, ok, ok); }), HasSubstr(no_header + ":1: header has no column"));
}

// ---- generic TSV directories ----

TEST(DataLoaders, ClassificationTsvDir) {
  std::string dir = fresh_dir() + "/mydata";
  write(dir, "train.tsv", "1\tGood stuff.\n0\tbad\n10\tmeh\n");
  write(dir, "dev.tsv", "0\tworse\n");
  write(dir, "test.tsv", "1\tfine\n2\tnew label in test\n");
  Dataset d = load_classification_tsv_dir(dir);
  EXPECT_EQ(d.name, "mydata");
  EXPECT_THAT(d.label_names, ElementsAre("0", "1", "2", "10"));  // numeric order
  ASSERT_EQ(d.train.size(), 3u);
  EXPECT_EQ(d.train[0].tokens, (Tokens{"good", "stuff", "."}));
  EXPECT_EQ(d.train[0].label, 1);
  EXPECT_EQ(d.train[2].label, 3);
  EXPECT_EQ(d.dev.size(), 1u);
  EXPECT_EQ(d.test[1].label, 2);
}

TEST(DataLoaders, ClassificationTsvDirSplitsDevWhenMissing) {
  std::string dir = fresh_dir();
  std::string train;
  for (int i = 0; i < 40; ++i) train += std::string(i % 2 ? "pos" : "neg") + "\tline " + std::to_string(i) + "\n";
  write(dir, "train.tsv", train);
  write(dir, "test.tsv", "pos\tx\n");
  Dataset d = load_classification_tsv_dir(dir);
  EXPECT_THAT(d.label_names, ElementsAre("neg", "pos"));  // byte order
  EXPECT_EQ(d.train.size(), 36u);
  EXPECT_EQ(d.dev.size(), 4u);
  Dataset again = load_classification_tsv_dir(dir);
  for (size_t i = 0; i < d.dev.size(); ++i) EXPECT_EQ(again.dev[i].tokens, d.dev[i].tokens);  // fixed seed
  std::set<std::string> seen;
  for (const auto* part : {&d.train, &d.dev}) for (const Example& e : *part) seen.insert(e.tokens[1]);
  EXPECT_EQ(seen.size(), 40u);
}

TEST(DataLoaders, ClassificationTsvErrorsNameFileAndLine) {
  std::string dir = fresh_dir();
  std::string train = write(dir, "train.tsv", "a\tok\nno tab here\n");
  write(dir, "test.tsv", "a\tok\n");
  EXPECT_THAT(error_of([&] { load_classification_tsv_dir(dir); }),
              HasSubstr(train + ":2: expected 2 tab-separated fields"));
  write(dir, "train.tsv", "a\tok\n");
  std::remove((dir + "/test.tsv").c_str());
  EXPECT_THAT(error_of([&] { load_classification_tsv_dir(dir); }), HasSubstr("cannot open " + dir + "/test.tsv"));
}

TEST(DataLoaders, PairTsvDir) {
  std::string dir = fresh_dir();
  write(dir, "train.tsv", "entailment\tA dog runs.\tAn animal moves.\nneutral\tx\ty\n");
  write(dir, "dev.tsv", "neutral\tp\tq\n");
  std::string test = write(dir, "test.tsv", "entailment\tp\tq\n");
  Dataset d = load_pair_tsv_dir(dir);
  EXPECT_EQ(d.task, TaskKind::Pair);
  EXPECT_THAT(d.label_names, ElementsAre("entailment", "neutral"));
  EXPECT_EQ(d.train[0].tokens, (Tokens{"a", "dog", "runs", "."}));
  EXPECT_EQ(d.train[0].tokens_b, (Tokens{"an", "animal", "moves", "."}));
  EXPECT_EQ(d.train[1].label, 1);
  write(dir, "test.tsv", "entailment\tp\tq\nneutral\tonly two\n");
  EXPECT_THAT(error_of([&] { load_pair_tsv_dir(dir); }), HasSubstr(test + ":2: expected 3 tab-separated fields"));
}

TEST(DataLoaders, TaggingDirTsvAndConll) {
  std::string dir = fresh_dir();
  write(dir, "train.tsv", "The\tDET\nCat\tNOUN\n\n\nsat\tVERB\n");
  write(dir, "dev.tsv", "a\tDET\n");
  // Token first, tag last (a BIO tag next to POS tags would be a mixed tag set,
  // which the loader refuses: see DataBadInput.TaggingRejectsNonBioTagInBioSet).
  write(dir, "test.conll", "-DOCSTART- -X- O O\n\nEU B-NP B-ORG NOUN\nrejects B-VP O VERB\n");
  Dataset d = load_tagging_dir(dir);
  EXPECT_EQ(d.task, TaskKind::Tag);
  EXPECT_THAT(d.label_names, ElementsAre("DET", "NOUN", "VERB"));
  ASSERT_EQ(d.train.size(), 2u);
  EXPECT_EQ(d.train[0].tokens, (Tokens{"the", "cat"}));
  EXPECT_THAT(d.train[0].tags, ElementsAre(0, 1));
  EXPECT_EQ(d.train[1].tokens, (Tokens{"sat"}));
  EXPECT_THAT(d.train[1].tags, ElementsAre(2));
  ASSERT_EQ(d.test.size(), 1u);
  EXPECT_EQ(d.test[0].tokens, (Tokens{"eu", "rejects"}));
  EXPECT_THAT(d.test[0].tags, ElementsAre(1, 2));
}

TEST(DataLoaders, TaggingErrorsNameFileAndLine) {
  std::string dir = fresh_dir();
  std::string train = write(dir, "train.tsv", "a\tX\nb\tY\n\nc Z\n");
  write(dir, "test.tsv", "a\tX\n");
  EXPECT_THAT(error_of([&] { load_tagging_dir(dir); }), HasSubstr(train + ":4: expected token<TAB>tag"));
  std::remove(train.c_str());
  std::string conll = write(dir, "train.conll", "a X\nlonely\n");
  EXPECT_THAT(error_of([&] { load_tagging_dir(dir); }), HasSubstr(conll + ":2: expected at least two columns"));
  std::remove(conll.c_str());
  EXPECT_THAT(error_of([&] { load_tagging_dir(dir); }), HasSubstr("cannot open " + dir + "/train.tsv"));
}

}  // namespace
}  // namespace attn
