// Tokenisation rules and the vocabulary (counts, specials, cap, save/load).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <unistd.h>

#include "attn/train/data/tokenizer.h"
#include "attn/train/data/vocab.h"
#include "attn/util/text.h"
#include "test_data_util.h"

namespace attn {
namespace {

using namespace test_data;

TEST(DataTokenizer, LowercasesAndSplitsPunctuation) {
  EXPECT_EQ(tokenize("Hello, World!"), (Tokens{"hello", ",", "world", "!"}));
  EXPECT_EQ(tokenize("  A  man\ta\nplan.  "), (Tokens{"a", "man", "a", "plan", "."}));
  EXPECT_EQ(tokenize("3.5 x-ray $100"), (Tokens{"3", ".", "5", "x", "-", "ray", "$", "100"}));
  EXPECT_EQ(tokenize("(a)[b]"), (Tokens{"(", "a", ")", "[", "b", "]"}));
  EXPECT_EQ(tokenize("..."), (Tokens{".", ".", "."}));
  EXPECT_TRUE(tokenize("").empty());
  EXPECT_TRUE(tokenize(" \t\r\n").empty());
}

TEST(DataTokenizer, Apostrophes) {
  EXPECT_EQ(tokenize("Don't stop"), (Tokens{"don't", "stop"}));
  EXPECT_EQ(tokenize("it 's do n't"), (Tokens{"it", "'s", "do", "n't"}));  // pre-tokenised clitics survive
  EXPECT_EQ(tokenize("'quoted'"), (Tokens{"'", "quoted", "'"}));
  EXPECT_EQ(tokenize("the dogs' bone"), (Tokens{"the", "dogs", "'", "bone"}));
  EXPECT_EQ(tokenize("we 'll see"), (Tokens{"we", "'ll", "see"}));
  EXPECT_EQ(tokenize("'sup"), (Tokens{"'", "sup"}));
  EXPECT_EQ(tokenize("don\xe2\x80\x99t"), (Tokens{"don't"}));  // U+2019 becomes '
}

TEST(DataTokenizer, NonAscii) {
  EXPECT_EQ(tokenize("Caf\xc3\xa9 \xc3\x89T\xc3\x89"), (Tokens{"caf\xc3\xa9", "\xc3\xa9t\xc3\xa9"}));  // É -> é
  EXPECT_EQ(tokenize("a\xc2\xa0" "b"), (Tokens{"a", "b"}));                          // no-break space
  EXPECT_EQ(tokenize("yes\xe2\x80\x94no"), (Tokens{"yes", "\xe2\x80\x94", "no"}));  // em dash
  EXPECT_EQ(tokenize("\xc2\xbfqu\xc3\xa9?"), (Tokens{"\xc2\xbf", "qu\xc3\xa9", "?"}));
  EXPECT_EQ(tokenize("caf\xe9 ok"), (Tokens{"caf", "ok"}));  // invalid UTF-8 byte dropped
  EXPECT_EQ(tokenize("\xe6\x97\xa5\xe6\x9c\xac"), (Tokens{"\xe6\x97\xa5\xe6\x9c\xac"}));  // CJK kept as a word
  EXPECT_EQ(tokenize("x\xef\xbf\xbdy"), (Tokens{"x", "y"}));  // U+FFFD separates
  EXPECT_EQ(lowercase_token("-LRB-"), "-lrb-");
  EXPECT_EQ(lowercase_token("\xc3\x89t\xc3\xa9"), "\xc3\xa9t\xc3\xa9");
}

std::vector<Example> small_corpus() {
  Example a, b, c;
  a.tokens = {"the", "cat", "sat"};
  b.tokens = {"the", "dog"};
  b.tokens_b = {"the", "cat"};
  c.tokens = {"a", "cat", "the"};
  return {a, b, c};  // the: 4, cat: 3, a/dog/sat: 1
}

// `attn predict` cuts its input with split_lines, the loaders cut files with
// read_lines: one rule for both, so a sentence is the same line either way.
TEST(DataLines, TextAndFileAreCutAlikeAtEveryLineEnd) {
  const std::string dir = fresh_dir();
  for (const std::string& text : {std::string(""), std::string("\n"), std::string("a"), std::string("a\n"),
                                 std::string("a\r\nb\rc\n\nd"), std::string("a\r\rb\r"),
                                 std::string("\xEF\xBB\xBF" "a\nb")}) {
    const std::string path = write(dir, "lines.txt", text);
    EXPECT_EQ(text::split_lines(text), text::read_lines("test", path)) << "text of " << text.size() << " bytes";
  }
  EXPECT_THAT(text::split_lines("a\r\nb\rc\n\nd"), ElementsAre("a", "b", "c", "", "d"));
  EXPECT_THAT(text::split_lines("\xEF\xBB\xBF" "a\r"), ElementsAre("a"));
}

TEST(DataVocab, BuildOrdersByCountThenWord) {
  Vocabulary v = Vocabulary::build(small_corpus(), 1);
  EXPECT_THAT(v.words(), ElementsAre("<pad>", "<unk>", "the", "cat", "a", "dog", "sat"));
  EXPECT_EQ(Vocabulary::kPad, 0);
  EXPECT_EQ(Vocabulary::kUnk, 1);
  EXPECT_EQ(v.id("the"), 2);
  EXPECT_EQ(v.id("sat"), 6);
  EXPECT_EQ(v.id("zebra"), Vocabulary::kUnk);
  EXPECT_EQ(v.word(3), "cat");
  EXPECT_THAT(v.ids({"cat", "zebra", "the"}), ElementsAre(3, 1, 2));
  EXPECT_THAT(error_of([&] { v.word(7); }), HasSubstr("id 7 out of range for size 7"));
}

TEST(DataVocab, MinCountAndMaxSize) {
  Vocabulary v = Vocabulary::build(small_corpus(), 2);
  EXPECT_THAT(v.words(), ElementsAre("<pad>", "<unk>", "the", "cat"));
  EXPECT_EQ(v.id("dog"), Vocabulary::kUnk);
  Vocabulary capped = Vocabulary::build(small_corpus(), 1, 3);
  EXPECT_THAT(capped.words(), ElementsAre("<pad>", "<unk>", "the"));
  EXPECT_EQ(capped.size(), 3);
  EXPECT_THAT(error_of([] { Vocabulary::build({}, 0); }), HasSubstr("min_count must be >= 1"));
  EXPECT_THAT(error_of([] { Vocabulary::build({}, 1, 1); }), HasSubstr("max_size must be 0"));
  EXPECT_EQ(Vocabulary().size(), 2);
}

TEST(DataVocab, SaveLoadRoundTrip) {
  std::string dir = test_data::fresh_dir();
  Vocabulary v = Vocabulary::build(small_corpus(), 1);
  std::string path = dir + "/vocab.txt";
  v.save(path);
  std::ifstream in(path);
  std::string first, second, third;
  std::getline(in, first);
  std::getline(in, second);
  std::getline(in, third);
  EXPECT_EQ(first, "<pad>");
  EXPECT_EQ(second, "<unk>");
  EXPECT_EQ(third, "the");
  Vocabulary back = Vocabulary::load(path);
  EXPECT_EQ(back.words(), v.words());
  EXPECT_EQ(back.id("dog"), v.id("dog"));
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp." + std::to_string(::getpid())));
}

TEST(DataVocab, LoadRejectsBadFiles) {
  std::string dir = test_data::fresh_dir();
  std::string no_pad = test_data::write(dir, "a.txt", "<unk>\n<pad>\nx\n");
  EXPECT_THAT(error_of([&] { Vocabulary::load(no_pad); }), HasSubstr(no_pad + ":1: expected <pad>"));
  std::string repeated = test_data::write(dir, "b.txt", "<pad>\n<unk>\nx\ny\nx\n");
  EXPECT_THAT(error_of([&] { Vocabulary::load(repeated); }), HasSubstr(repeated + ":5: repeated word 'x'"));
  EXPECT_THAT(error_of([&] { Vocabulary::load(dir + "/missing.txt"); }), HasSubstr("cannot open " + dir + "/missing.txt"));
}

}  // namespace
}  // namespace attn
