// The CoNLL-2005 SRL loader (train/data/formats/conll05.cpp): the shipped
// fixture read as one instance per predicate with BIO tags and the
// predicate's position, and each malformed input refused with its file,
// line and problem.
#include "attn/train/data/formats/loaders.h"
#include "attn/train/data/task_data.h"
#include "test_data_util.h"

namespace attn {
namespace {

using namespace test_data;

std::string fixture_dir() { return std::string(ATTN_SOURCE_DIR) + "/data/fixtures/conll05"; }

std::vector<std::string> tag_names(const Dataset& d, const Example& e) {
  std::vector<std::string> out;
  for (int64_t t : e.tags) out.push_back(d.label_names.at(static_cast<size_t>(t)));
  return out;
}

TEST(Conll05Loader, FixtureGivesOneInstancePerPredicate) {
  const Dataset d = load_conll05(fixture_dir());
  EXPECT_EQ(d.task, TaskKind::Srl);
  EXPECT_EQ(d.train.size(), 5u);  // 2 + 1 + 1 + 1 predicates
  EXPECT_EQ(d.dev.size(), 2u);
  EXPECT_EQ(d.test.size(), 2u);
  // "The company said profits rose sharply ." with predicates said, rose.
  const Example& said = d.train[0];
  const Example& rose = d.train[1];
  EXPECT_EQ(said.tokens, (Tokens{"the", "company", "said", "profits", "rose", "sharply", "."}));
  EXPECT_EQ(said.predicate, 2);
  EXPECT_EQ(rose.predicate, 4);
  EXPECT_EQ(tag_names(d, said), (Tokens{"B-A0", "I-A0", "B-V", "B-A1", "I-A1", "I-A1", "O"}));
  EXPECT_EQ(tag_names(d, rose), (Tokens{"O", "O", "O", "B-A1", "B-V", "B-AM-MNR", "O"}));
  // A discontinuous argument keeps its C- tag; the names are in byte order.
  EXPECT_EQ(tag_names(d, d.test[1]), (Tokens{"B-A1", "I-A1", "O", "B-A0", "B-V", "O", "B-C-A1", "I-C-A1", "O"}));
  EXPECT_TRUE(std::is_sorted(d.label_names.begin(), d.label_names.end()));
}

TEST(Conll05Loader, TaskDataPicksItForTheSrlTask) {
  DataSpec spec;
  spec.data = fixture_dir();
  spec.task = TaskKind::Srl;
  EXPECT_EQ(load_task_data(spec).train.size(), 5u);  // --format auto
  spec.format = "conll05";
  EXPECT_EQ(load_task_data(spec).test.size(), 2u);
  spec.task = TaskKind::Tag;
  EXPECT_THAT(error_of([&] { load_task_data(spec); }), HasSubstr("the data is for the srl task, not tag"));
}

// One sentence in dir/train.txt (and a valid test.txt); the error of loading it.
std::string error_for(const std::string& train) {
  const std::string dir = fresh_dir();
  write(dir, "train.txt", train);
  write(dir, "test.txt", "Prices - (A1*)\nfell fall (V*)\n");
  return error_of([&] { load_conll05(dir); });
}

TEST(Conll05Loader, UnbalancedBracketsAreRefused) {
  EXPECT_THAT(error_for("The - (A0*\ncat - *\nsat sit (V*)\n"),
              HasSubstr("train.txt:3: argument column 1 opens 'V' while 'A0' (opened on line 1) is still open"));
  EXPECT_THAT(error_for("The - (A0*\ncat - *)\nsat sit (V*)\nhere - *)\n"),
              HasSubstr("train.txt:4: argument column 1 closes an argument that was never opened"));
  EXPECT_THAT(error_for("sat sit (V*)\nhere - (AM-LOC*\n"),
              HasSubstr("train.txt:2: argument column 1: 'AM-LOC' is never closed before the sentence ends"));
  EXPECT_THAT(error_for("The - ((A0*\ncat - *)\nsat sit (V*)\n"), HasSubstr("opens more than one argument"));
  EXPECT_THAT(error_for("The - (A0*A1)\nsat sit (V*)\n"), HasSubstr("opens 'A0' but closes 'A1'"));
  EXPECT_THAT(error_for("The - A0\nsat sit (V*)\n"), HasSubstr("train.txt:1: props cell 'A0' is not"));
}

TEST(Conll05Loader, ARowWithTheWrongNumberOfColumnsIsRefused) {
  EXPECT_THAT(error_for("The - (A0*)\ncat -\nsat sit (V*)\n"),
              HasSubstr("train.txt:2: expected 3 columns like the sentence's first row (line 1), found 2"));
  // Two predicates but one argument column.
  EXPECT_THAT(error_for("The - (A0*)\nsaw see (V*)\nit - *\nrun run *\n"),
              HasSubstr("2 predicates in its target column but 1 argument columns"));
}

TEST(Conll05Loader, APredicateColumnWithoutItsPredicateIsRefused) {
  EXPECT_THAT(error_for("The - (A0*)\nsat sit *\nhere - (AM-LOC*)\n"),
              HasSubstr("train.txt:2: argument column 1 has no (V*) span on its predicate 'sit'"));
  // The V span on another word than the target's row.
  EXPECT_THAT(error_for("The - (V*)\nsat sit *\n"), HasSubstr("has no (V*) span on its predicate"));
}

TEST(Conll05Loader, MissingFilesAreNamed) {
  const std::string dir = fresh_dir();
  EXPECT_THAT(error_of([&] { load_conll05(dir); }), HasSubstr("cannot open " + dir + "/train.txt"));
  write(dir, "train.txt", "sat sit (V*)\n");
  EXPECT_THAT(error_of([&] { load_conll05(dir); }), HasSubstr("cannot open " + dir + "/test.txt"));
}

}  // namespace
}  // namespace attn
