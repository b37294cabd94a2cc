// Data that used to be read into something other than what the file says:
// a lowercase or TAB-separated TREC label, and an empty class file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "attn/models/config.h"
#include "attn/nn/glove.h"
#include "attn/train/data/formats/loaders.h"
#include "test_data_util.h"

namespace attn {
namespace {

using namespace test_data;

TEST(TrecLabels, ALowercaseCoarseLabelIsAnErrorNotASeventhClass) {
  const std::string dir = fresh_dir();
  const std::string train = write(dir, "train.txt", "DESC:manner how ?\ndesc:manner why ?\n");
  const std::string test = write(dir, "test.txt", "DESC:manner how ?\n");
  const std::string err = error_of([&] { load_trec(train, test, false); });
  EXPECT_THAT(err, HasSubstr(train + ":2: coarse label 'desc' is not one of ABBR, DESC, ENTY, HUM, LOC, NUM"));
}

TEST(TrecLabels, ATabAfterTheLabelSeparatesItFromTheQuestion) {
  const std::string dir = fresh_dir();
  const std::string train = write(dir, "train.txt", "DESC:manner\thow did it work ?\nNUM:date when ?\n");
  const std::string test = write(dir, "test.txt", "NUM:date\t when ?\n");
  for (bool fine : {false, true}) {
    const Dataset d = load_trec(train, test, fine);
    ASSERT_EQ(d.label_names.size(), 2u) << fine;
    EXPECT_EQ(d.label_names[0], fine ? "DESC:manner" : "DESC");
    ASSERT_EQ(d.test.size(), 1u);
    EXPECT_EQ(d.test[0].tokens, (std::vector<std::string>{"when", "?"}));
    size_t words = 0;  // the first question keeps its first word
    for (const auto* part : {&d.train, &d.dev})
      for (const Example& e : *part)
        if (e.tokens.size() == 5) {
          EXPECT_EQ(e.tokens[0], "how");
          ++words;
        }
    EXPECT_EQ(words, 1u) << fine;
  }
}

TEST(SentencePerLine, AnEmptyOrBlankClassFileIsAnErrorNamingIt) {
  const std::string dir = fresh_dir();
  const std::string pos = write(dir, "mpqa.pos", "good\nfine\n");
  for (const char* text : {"", " \n\n\t\n"}) {
    const std::string neg = write(dir, "mpqa.neg", text);
    const std::string err = error_of([&] { load_sentence_per_line("mpqa", {{"neg", neg}, {"pos", pos}}); });
    EXPECT_THAT(err, HasSubstr(neg + " (class 'neg' of mpqa) has no sentences"));
  }
}

TEST(UserErrors, AFolderGivenAsAFileIsNamedAsAFolder) {
  const std::string dir = fresh_dir();
  EXPECT_THAT(error_of([&] { load_trec(dir, dir, false); }), HasSubstr(dir + " is a folder; give a file"));
}

TEST(UserErrors, AFolderGivenAsAModelConfigIsNamedAsAFolder) {
  const std::string dir = fresh_dir();
  EXPECT_THAT(error_of([&] { Config::load(dir); }), HasSubstr("'" + dir + "' is a folder; give a file"));
}

TEST(UserErrors, AWord2vecHeaderIsReadAsAHeaderNotAVector) {
  const std::string dir = fresh_dir();
  const std::string vectors = write(dir, "w2v.txt", "2 3\ncat 0.1 0.2 0.3\ndog 0.4 0.5 0.6\n");
  const GloveVectors g = load_glove(vectors);
  EXPECT_EQ(g.dim, 3);
  EXPECT_EQ(g.vectors.size(), 2u);
  EXPECT_EQ(g.vectors.count("2"), 0u);
  const std::string wrong = write(dir, "wrong.txt", "2 4\ncat 0.1 0.2 0.3\n");
  EXPECT_THAT(error_of([&] { load_glove(wrong); }),
              HasSubstr("the word2vec header says 4 values per vector, but 'cat' has 3"));
}

}  // namespace
}  // namespace attn
