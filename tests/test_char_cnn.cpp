// The character feature (models/char_cnn.h), its alphabet
// (train/data/char_vocab.h) and the character ids batching fills: a float64
// gradient check, unknown characters, words beyond the length cap, padding
// characters and padding words selected out.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "attn/engine/autograd.h"
#include "attn/models/char_cnn.h"
#include "attn/models/task_model.h"
#include "attn/nn/gradcheck_module.h"
#include "attn/ops/binary/binary.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/train/data/batching.h"
#include "attn/train/data/char_vocab.h"
#include "test_data_util.h"

using namespace attn;
using namespace attn::test_data;

namespace {

CharCnnOptions small_options(int64_t alphabet) {
  CharCnnOptions o;
  o.alphabet = alphabet;
  o.char_dim = 4;
  o.filters = 3;
  o.width = 3;
  return o;
}

// [B, n, L] character ids from rows of words, each a list of ids.
Tensor char_ids(const std::vector<std::vector<std::vector<int64_t>>>& rows, int64_t n, int64_t len) {
  std::vector<int64_t> flat(static_cast<size_t>(static_cast<int64_t>(rows.size()) * n * len), 0);
  for (size_t r = 0; r < rows.size(); ++r)
    for (size_t w = 0; w < rows[r].size(); ++w)
      for (size_t c = 0; c < rows[r][w].size(); ++c)
        flat[(r * static_cast<size_t>(n) + w) * static_cast<size_t>(len) + c] = rows[r][w][c];
  return from_indices(flat, {static_cast<int64_t>(rows.size()), n, len});
}

Example example(const Tokens& cased) {
  Example e;
  e.cased_tokens = cased;
  for (const std::string& t : cased) e.tokens.push_back(t);
  e.tags.assign(cased.size(), 0);
  return e;
}

}  // namespace

TEST(CharCnn, GradcheckFloat64) {
  Generator init(3), noise(4);
  CharCnn cnn(small_options(7), init, noise, DType::F64);
  cnn.set_training(false);
  // Words of 1, 2 and 4 characters, a padding word, the unknown character (1).
  const Tensor chars = char_ids({{{2, 3, 4, 5}, {6}, {}}, {{1, 2}, {3, 3, 6}, {5, 4}}}, 3, 4);
  ModuleGradcheckOptions o;
  o.check.samples = 1000;  // every element
  const ModuleGradcheckResult r = gradcheck_module(cnn, [&] { return cnn.forward(chars); }, o);
  EXPECT_TRUE(r.result.passed) << r.result.failure;
  EXPECT_EQ(r.names, (std::vector<std::string>{"embedding.weight", "conv.weight", "conv.bias"}));
  Tensor y = sum(cnn.forward(chars) * cnn.forward(chars));
  y.backward();
  for (const auto& [name, p] : cnn.named_parameters()) {
    double largest = 0;
    for (double v : p.grad().to_vector()) largest = std::max(largest, std::abs(v));
    EXPECT_GT(largest, 0.0) << name << " gets no gradient";
  }
}

TEST(CharCnn, PaddingWordsReadZeroAndPaddingCharactersChangeNothing) {
  Generator init(5), noise(6);
  CharCnn cnn(small_options(9), init, noise, DType::F64);
  cnn.set_training(false);
  const Tensor narrow_batch = char_ids({{{2, 3}, {4}}}, 3, 2);
  const Tensor wide_batch = char_ids({{{2, 3}, {4}}, {{5, 6, 7, 8, 2, 3}}}, 3, 6);
  const Tensor a = cnn.forward(narrow_batch), b = cnn.forward(wide_batch);
  ASSERT_EQ(a.shape(), (Shape{1, 3, 3}));
  ASSERT_EQ(b.shape(), (Shape{2, 3, 3}));
  for (int64_t w = 0; w < 3; ++w)
    for (int64_t f = 0; f < 3; ++f) {
      // The same word, padded to 2 or to 6 characters, reads the same up to rounding.
      EXPECT_NEAR(a.at({0, w, f}), b.at({0, w, f}), 1e-12);
      if (w == 2) {
        EXPECT_EQ(a.at({0, w, f}), 0.0);  // the padding word
      }
    }
  // tanh keeps a real word's feature inside (-1, 1), and it is not zero.
  EXPECT_GT(std::abs(a.at({0, 0, 0})) + std::abs(a.at({0, 0, 1})) + std::abs(a.at({0, 0, 2})), 0.0);
}

TEST(CharCnn, Float32HasNoNanForAnyWordShape) {
  Generator init(7), noise(8);
  CharCnn cnn(small_options(5), init, noise, DType::F32);
  const Tensor chars = char_ids({{{}, {}, {}}, {{1}, {2, 1, 1, 1, 1}, {}}}, 3, 5);  // an all-padding row
  Tensor y = cnn.forward(chars);
  for (double v : y.to_vector()) EXPECT_TRUE(std::isfinite(v));
  sum(y).backward();
  for (const auto& [name, p] : cnn.named_parameters())
    for (double v : p.grad().to_vector()) EXPECT_TRUE(std::isfinite(v)) << name;
}

TEST(CharVocabulary, UnknownCharactersAndTheLengthCap) {
  const CharVocabulary v = CharVocabulary::build({example({"Abc", "ab"})});
  // <pad>, <unk>, then the most frequent first (b twice), ties in byte order (A, a, c once each).
  EXPECT_EQ(v.size(), 6);
  EXPECT_EQ(v.id("b"), 2);
  EXPECT_EQ(v.id("A"), 3);
  EXPECT_EQ(v.id("a"), 4);
  EXPECT_EQ(v.id("c"), 5);
  EXPECT_EQ(v.word_ids("é?"), (std::vector<int64_t>{CharVocabulary::kUnk, CharVocabulary::kUnk}));
  EXPECT_EQ(utf8_characters("aé\xff"), (Tokens{"a", "é", "\xff"}));
  // A word beyond the cap keeps its first and last half-cap characters.
  const std::string longest(40, 'a');
  const std::vector<int64_t> ids = v.word_ids("b" + longest + "c");
  ASSERT_EQ(ids.size(), CharVocabulary::kMaxWordChars);
  EXPECT_EQ(ids.front(), v.id("b"));
  EXPECT_EQ(ids.back(), v.id("c"));
}

TEST(CharVocabulary, SavesAndLoads) {
  const std::string dir = fresh_dir();
  const CharVocabulary v = CharVocabulary::build({example({"Zoë", "a b"})});
  v.save(dir + "/chars.txt");
  const CharVocabulary w = CharVocabulary::load(dir + "/chars.txt");
  EXPECT_EQ(w.size(), v.size());
  for (const std::string c : {"Z", "o", "ë", " ", "a", "b"}) EXPECT_EQ(w.id(c), v.id(c)) << c;
  write(dir, "bad.txt", "<pad>\n<unk>\nab\n");
  EXPECT_THAT(error_of([&] { CharVocabulary::load(dir + "/bad.txt"); }), HasSubstr("bad.txt:3: 'ab' is not one character"));
  write(dir, "bad.txt", "<unk>\n");
  EXPECT_THAT(error_of([&] { CharVocabulary::load(dir + "/bad.txt"); }), HasSubstr("bad.txt:1: expected <pad>"));
  EXPECT_THAT(error_of([&] { CharVocabulary::load(dir + "/none.txt"); }), HasSubstr("cannot open"));
}

TEST(CharCnn, BatchingFillsCharactersFromTheCasedTokens) {
  std::vector<Example> examples = {example({"Rome", "is"}), example({"a" + std::string(30, 'x')})};
  for (Example& e : examples)
    for (std::string& t : e.tokens) t = "w";  // the word vocabulary's (lowercased) view differs
  Vocabulary vocab = Vocabulary::build(examples, 1);
  vocab.set_characters(CharVocabulary::build(examples));
  const CharVocabulary& chars = *vocab.characters();
  BatchOptions o;
  o.shuffle = false;
  o.bucket_by_length = false;
  BatchIterator it(examples, vocab, TaskKind::Tag, o, nullptr);
  Batch batch;
  ASSERT_TRUE(it.next(batch));
  ASSERT_EQ(batch.chars.shape(), (Shape{2, 2, static_cast<int64_t>(CharVocabulary::kMaxWordChars)}));
  EXPECT_EQ(batch.chars.at({0, 0, 0}), chars.id("R"));
  EXPECT_EQ(batch.chars.at({0, 1, 1}), chars.id("s"));
  EXPECT_EQ(batch.chars.at({0, 1, 2}), CharVocabulary::kPad);
  EXPECT_EQ(batch.chars.at({1, 1, 0}), CharVocabulary::kPad);  // the padding word
}

TEST(CharCnn, TaskModelNeedsTheAlphabetAndTheIds) {
  Generator init(1), noise(2);
  const Config c = Config::parse("encoder = transformer\nembedding_dim = 8\nhidden = 8\nheads = 2\nchar_cnn = true\n"
                                 "char_filters = 4\n");
  EXPECT_THAT(error_of([&] { TaskModel(c, TaskKind::Tag, 10, 3, DType::F32, init, noise); }),
              HasSubstr("char_cnn = true needs the character vocabulary"));
  TaskModel m(c, TaskKind::Tag, 10, 3, DType::F32, init, noise, 6);
  TaskInputs in;
  in.ids = from_indices({2, 3, 4}, {1, 3});
  in.mask = ones({1, 3}, DType::U8);
  EXPECT_THAT(error_of([&] { m.logits(in); }), HasSubstr("char_cnn = true needs character ids [B, n, L]"));
  in.chars = char_ids({{{2}, {3, 4}, {5, 1}}}, 3, 2);
  EXPECT_EQ(m.logits(in).shape(), (Shape{1, 3, 3}));
}
