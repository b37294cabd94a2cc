// The sequence-labelling loaders of the Multi-Scale Transformer paper's
// Table 4 (CoNLL-2003, CoNLL-2012 OntoNotes NER, PTB WSJ POS) on the
// fixtures in their official layouts, their tag conversions, and the
// errors that name a malformed line.
#include "attn/train/data/formats/loaders.h"
#include "attn/train/data/task_data.h"
#include "test_data_util.h"

using namespace attn;
using namespace attn::test_data;

namespace {

const std::string kFixtures = std::string(ATTN_SOURCE_DIR) + "/data/fixtures/";

Tokens tag_names(const Dataset& d, const Example& e) {
  Tokens out;
  for (int64_t t : e.tags) out.push_back(d.label_names.at(static_cast<size_t>(t)));
  return out;
}

}  // namespace

TEST(SeqlabLoaders, Conll03ReadsIob1AsBio) {
  const Dataset d = load_conll03(kFixtures + "conll03", TagScheme::Bio);
  EXPECT_EQ(d.task, TaskKind::Tag);
  ASSERT_EQ(d.train.size(), 4u);  // -DOCSTART- lines are no sentences
  EXPECT_EQ(d.dev.size(), 2u);    // eng.testa
  EXPECT_EQ(d.test.size(), 2u);   // eng.testb
  // IOB1's B- marks only a chunk after one of its own type; in BIO each chunk starts with B-.
  EXPECT_THAT(d.train[3].cased_tokens, ElementsAre("Germany", "France", "and", "Italy", "met", "in", "Rome", "."));
  EXPECT_THAT(tag_names(d, d.train[3]), ElementsAre("B-LOC", "B-LOC", "O", "B-LOC", "O", "O", "B-LOC", "O"));
  EXPECT_THAT(tag_names(d, d.train[1]), ElementsAre("B-PER", "I-PER"));
  // The word vocabulary reads lowercase; the character feature the original case.
  EXPECT_THAT(d.train[0].tokens, ElementsAre("eu", "rejects", "german", "call", "to", "boycott", "british", "lamb", "."));
  EXPECT_EQ(d.train[0].cased_tokens[0], "EU");
}

TEST(SeqlabLoaders, Conll03InBioes) {
  const Dataset d = load_conll03(kFixtures + "conll03", TagScheme::Bioes);
  EXPECT_THAT(tag_names(d, d.train[1]), ElementsAre("B-PER", "E-PER"));
  EXPECT_THAT(tag_names(d, d.train[0])[0], "S-ORG");
  EXPECT_THAT(tag_names(d, d.test[1]), ElementsAre("B-PER", "E-PER"));
}

TEST(SeqlabLoaders, Conll03Errors) {
  const std::string dir = fresh_dir();
  const std::string good = "EU NNP I-NP I-ORG\n\n";
  write(dir, "eng.testa", good);
  write(dir, "eng.testb", good);
  const std::string train = write(dir, "eng.train", "EU NNP I-NP I-ORG\nrejects VBZ I-VP\n");
  EXPECT_THAT(error_of([&] { load_conll03(dir, TagScheme::Bio); }),
              HasSubstr(train + ":2: expected 4 columns (word POS chunk NER), found 3"));
  write(dir, "eng.train", "EU NNP I-NP I-ORG\nrejects VBZ I-VP E-ORG\n");
  EXPECT_THAT(error_of([&] { load_conll03(dir, TagScheme::Bio); }),
              HasSubstr(train + ":2: NER tag 'E-ORG' is not O, B-<type> or I-<type>"));
  std::filesystem::remove(dir + "/eng.testb");
  write(dir, "eng.train", good);
  EXPECT_THAT(error_of([&] { load_conll03(dir, TagScheme::Bio); }), HasSubstr("cannot open " + dir + "/eng.testb"));
}

TEST(SeqlabLoaders, Conll12ReadsBracketNamesAsBio) {
  const Dataset d = load_conll12(kFixtures + "conll12", TagScheme::Bio);
  ASSERT_EQ(d.train.size(), 2u);
  EXPECT_EQ(d.dev.size(), 1u);
  EXPECT_EQ(d.test.size(), 1u);
  EXPECT_THAT(d.train[0].cased_tokens,
              ElementsAre("In", "the", "summer", "of", "2005", ",", "Hong", "Kong", "welcomed", "Disney", "."));
  EXPECT_THAT(tag_names(d, d.train[0]), ElementsAre("O", "B-DATE", "I-DATE", "I-DATE", "I-DATE", "O", "B-GPE",
                                                    "I-GPE", "O", "B-ORG", "O"));
  EXPECT_THAT(tag_names(d, d.train[1]), ElementsAre("B-PERSON", "I-PERSON", "O"));
  const Dataset e = load_conll12(kFixtures + "conll12", TagScheme::Bioes);
  EXPECT_THAT(tag_names(e, e.test[0]), ElementsAre("S-GPE", "O", "S-CARDINAL", "O"));
}

TEST(SeqlabLoaders, Conll12Errors) {
  const std::string dir = fresh_dir();
  const std::string good = "d 0 0 Japan NNP * - - - - (GPE) -\n\n";
  write(dir, "dev.english.v4_gold_conll", good);
  write(dir, "test.english.v4_gold_conll", good);
  const auto train_with = [&](const std::string& text) {
    return write(dir, "train.english.v4_gold_conll", text);
  };
  const auto error = [&] { return error_of([&] { load_conll12(dir, TagScheme::Bio); }); };
  std::string train = train_with("d 0 0 Li NNP * - - - - (PERSON* -\nd 0 1 Wei NNP * - - - - * -\n\n");
  EXPECT_THAT(error(), HasSubstr(train + ":3: the sentence ends inside the name 'PERSON'"));
  train_with("d 0 0 Li NNP * - - - - *) -\n");
  EXPECT_THAT(error(), HasSubstr(train + ":1: name cell '*)' closes a name that never opened"));
  train_with("d 0 0 Li NNP * - - - - (PERSON* -\nd 0 1 Wei NNP * - - - - (ORG) -\n");
  EXPECT_THAT(error(), HasSubstr(train + ":2: name 'ORG' opens inside the open name 'PERSON'"));
  train_with("d 0 0 Li NNP * - - - - PERSON -\n");
  EXPECT_THAT(error(), HasSubstr(train + ":1: name cell 'PERSON' is not (TYPE*, *, *), (TYPE) or (TYPE*)"));
  train_with("d 0 0 Li NNP * - - - - * -\nd 0 0 Wei NNP * - - - - * -\n");
  EXPECT_THAT(error(), HasSubstr(train + ":2: word number '0' where the sentence's word 1 was expected"));
  train_with("d 0 0 Li NNP * - - - *\n");
  EXPECT_THAT(error(), HasSubstr(train + ":1: expected at least 12 columns"));
}

TEST(SeqlabLoaders, PtbPosSplitsTheWsjSections) {
  const Dataset d = load_ptb_pos(kFixtures + "ptb-pos");
  // Two sentences in each section: 00-18 train, 19-21 dev, 22-24 test.
  EXPECT_EQ(d.train.size(), 38u);
  EXPECT_EQ(d.dev.size(), 6u);
  EXPECT_EQ(d.test.size(), 6u);
  EXPECT_THAT(d.train[0].cased_tokens, ElementsAre("Pierre", "Vinken", ",", "61", "years", "old", ",", "will", "join",
                                                   "the", "board", "."));
  EXPECT_THAT(tag_names(d, d.train[0]),
              ElementsAre("NNP", "NNP", ",", "CD", "NNS", "JJ", ",", "MD", "VB", "DT", "NN", "."));
  // Section 02's first sentence: "\/" unescaped, the empty element dropped.
  EXPECT_THAT(d.train[4].cased_tokens, ElementsAre("The", "1/2", "point", "rise", "was", "expected", "."));
  for (const std::string& tag : d.label_names) EXPECT_NE(tag, "-NONE-");
}

TEST(SeqlabLoaders, PtbPosErrors) {
  const std::string dir = fresh_dir();
  for (int s = 0; s < 24; ++s) write(dir, (s < 10 ? "0" : "") + std::to_string(s) + "/wsj", "A/DT cat/NN\n");
  EXPECT_THAT(error_of([&] { load_ptb_pos(dir); }), HasSubstr("cannot open the section folder " + dir + "/24"));
  write(dir, "24/wsj", "A/DT cat/NN\n");
  const std::string bad = write(dir, "07/wsj", "A/DT cat\n");
  EXPECT_THAT(error_of([&] { load_ptb_pos(dir); }), HasSubstr(bad + ":1: token 'cat' is not word/TAG"));
}

TEST(SeqlabLoaders, FormatsAreChosenByName) {
  DataSpec s;
  s.task = TaskKind::Tag;
  s.verbose = false;
  s.data = kFixtures + "conll03";
  s.format = "conll03-bioes";
  EXPECT_EQ(load_task_data(s).train.size(), 4u);
  s.data = kFixtures + "conll12";
  s.format = "conll12";
  EXPECT_EQ(load_task_data(s).train.size(), 2u);
  s.data = kFixtures + "ptb-pos";
  s.format = "ptb-pos";
  EXPECT_EQ(load_task_data(s).train.size(), 38u);
  s.format = "conll2003";
  EXPECT_THAT(error_of([&] { load_task_data(s); }), HasSubstr("unknown --format 'conll2003'"));
}

TEST(SeqlabLoaders, TaggingDirAcceptsBioesAndRefusesUnprefixedTagsBesideThem) {
  const std::string dir = fresh_dir();
  write(dir, "d/train.tsv", "Li\tB-PER\nWei\tE-PER\nleft\tO\n\nRome\tS-LOC\n\n");
  write(dir, "d/test.tsv", "Rome\tS-LOC\n\n");
  const Dataset d = load_tagging_dir(dir + "/d");
  EXPECT_THAT(d.label_names, ElementsAre("B-PER", "E-PER", "O", "S-LOC"));
  const std::string train = write(dir, "d/train.tsv", "Li\tB-PER\nleft\tVERB\n\n");
  EXPECT_THAT(error_of([&] { load_tagging_dir(dir + "/d"); }),
              HasSubstr(train + ":2: tag 'VERB' is not O, B-<type>, I-<type>, E-<type> or S-<type>"));
}
