// BatchIterator: ids, masks, labels, tags at padding, truncation, bucketing
// that covers every example once per epoch, and seeded determinism.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "attn/train/data/batching.h"
#include "test_data_util.h"

namespace attn {
namespace {

using namespace test_data;

std::vector<int64_t> ints(const Tensor& t) {
  std::vector<int64_t> out;
  for (double v : t.to_vector()) out.push_back(static_cast<int64_t>(v));
  return out;
}

Example sentence(std::vector<std::string> tokens, int64_t label) {
  Example e;
  e.tokens = std::move(tokens);
  e.label = label;
  return e;
}

Vocabulary vocab() { return Vocabulary::from_words({"a", "b", "c", "d"}); }  // ids 2..5

// More distinct words than any fixed cap the vocabulary once had (50,000):
// with no cap every training word gets a row, as the papers and the presets
// say; a cap keeps the most frequent.
TEST(VocabularyCap, NoCapKeepsEveryTrainingWordAndACapKeepsTheMostFrequent) {
  std::vector<Example> examples(1);
  for (int i = 0; i < 60000; ++i) examples[0].tokens.push_back("w" + std::to_string(i));
  examples[0].tokens.push_back("w7");  // the one word seen twice
  const Vocabulary all = Vocabulary::build(examples, 1, 0);
  EXPECT_EQ(all.size(), 60000 + 2);
  EXPECT_NE(all.id("w59999"), Vocabulary::kUnk);
  const Vocabulary capped = Vocabulary::build(examples, 1, 3);
  EXPECT_EQ(capped.size(), 3);
  EXPECT_NE(capped.id("w7"), Vocabulary::kUnk);
  EXPECT_EQ(capped.id("w8"), Vocabulary::kUnk);
}

TEST(DataBatching, PadsAndMasksInSourceOrder) {
  std::vector<Example> ex = {sentence({"a", "b", "c"}, 1), sentence({"d"}, 0), sentence({"b", "zzz"}, 2)};
  BatchOptions opt;
  opt.batch_size = 2;
  opt.shuffle = false;
  opt.bucket_by_length = false;
  BatchIterator it(ex, vocab(), TaskKind::Classify, opt, nullptr);
  EXPECT_EQ(it.batches_per_epoch(), 2);
  Batch b;
  ASSERT_TRUE(it.next(b));
  EXPECT_EQ(b.ids.shape(), (Shape{2, 3}));
  EXPECT_EQ(b.ids.dtype(), DType::I64);
  EXPECT_EQ(b.mask.dtype(), DType::U8);
  EXPECT_THAT(ints(b.ids), ElementsAre(2, 3, 4, 5, 0, 0));
  EXPECT_THAT(ints(b.mask), ElementsAre(1, 1, 1, 1, 0, 0));
  EXPECT_THAT(ints(b.labels), ElementsAre(1, 0));
  EXPECT_THAT(b.indices, ElementsAre(0u, 1u));
  EXPECT_FALSE(b.ids_b.defined());
  EXPECT_FALSE(b.tags.defined());
  ASSERT_TRUE(it.next(b));
  EXPECT_EQ(b.ids.shape(), (Shape{1, 2}));  // n = the longest in this batch
  EXPECT_THAT(ints(b.ids), ElementsAre(3, Vocabulary::kUnk));
  EXPECT_THAT(b.indices, ElementsAre(2u));
  EXPECT_FALSE(it.next(b));
  ASSERT_TRUE(it.next(b));  // the next epoch starts
  EXPECT_THAT(b.indices, ElementsAre(0u, 1u));
}

TEST(DataBatching, PairAndRelatednessFillSecondSentence) {
  Example p = sentence({"a"}, 2);
  p.tokens_b = {"b", "c", "d"};
  p.score = 4.5;
  Example q = sentence({"c", "d"}, 0);
  q.tokens_b = {};  // an empty sentence: one valid <unk>
  q.score = 1.25;
  BatchOptions opt;
  opt.shuffle = false;
  opt.bucket_by_length = false;
  Batch b;
  BatchIterator pair({p, q}, vocab(), TaskKind::Pair, opt, nullptr);
  ASSERT_TRUE(pair.next(b));
  EXPECT_THAT(ints(b.ids), ElementsAre(2, 0, 4, 5));
  EXPECT_THAT(ints(b.mask), ElementsAre(1, 0, 1, 1));
  EXPECT_EQ(b.ids_b.shape(), (Shape{2, 3}));
  EXPECT_THAT(ints(b.ids_b), ElementsAre(3, 4, 5, Vocabulary::kUnk, 0, 0));
  EXPECT_THAT(ints(b.mask_b), ElementsAre(1, 1, 1, 1, 0, 0));
  EXPECT_THAT(ints(b.labels), ElementsAre(2, 0));
  EXPECT_TRUE(b.scores.empty());

  BatchIterator rel({p, q}, vocab(), TaskKind::Relatedness, opt, nullptr);
  ASSERT_TRUE(rel.next(b));
  EXPECT_THAT(b.scores, ElementsAre(4.5, 1.25));
  EXPECT_FALSE(b.labels.defined());
  EXPECT_TRUE(b.ids_b.defined());
}

TEST(DataBatching, TagsAreIgnoredAtPaddingAndTruncated) {
  Example x, y;
  x.tokens = {"a", "b", "c", "d"};
  x.tags = {0, 1, 2, 3};
  y.tokens = {"b"};
  y.tags = {4};
  BatchOptions opt;
  opt.shuffle = false;
  opt.bucket_by_length = false;
  Batch b;
  BatchIterator it({x, y}, vocab(), TaskKind::Tag, opt, nullptr);
  ASSERT_TRUE(it.next(b));
  EXPECT_THAT(ints(b.tags), ElementsAre(0, 1, 2, 3, 4, -100, -100, -100));
  EXPECT_FALSE(b.labels.defined());

  opt.max_len = 2;
  BatchIterator cut({x, y}, vocab(), TaskKind::Tag, opt, nullptr);
  ASSERT_TRUE(cut.next(b));
  EXPECT_EQ(b.ids.shape(), (Shape{2, 2}));
  EXPECT_THAT(ints(b.ids), ElementsAre(2, 3, 3, 0));
  EXPECT_THAT(ints(b.mask), ElementsAre(1, 1, 1, 0));
  EXPECT_THAT(ints(b.tags), ElementsAre(0, 1, 4, -100));
}

TEST(DataBatching, RejectsExamplesThatDoNotFitTheTask) {
  BatchOptions opt;
  opt.shuffle = false;
  EXPECT_THAT(error_of([&] { BatchIterator({sentence({"a"}, -1)}, vocab(), TaskKind::Classify, opt, nullptr); }),
              HasSubstr("example 0 has no label"));
  Example t;
  t.tokens = {"a", "b"};
  t.tags = {1};
  EXPECT_THAT(error_of([&] { BatchIterator({t}, vocab(), TaskKind::Tag, opt, nullptr); }),
              HasSubstr("example 0 has 1 tags for 2 tokens"));
  opt.shuffle = true;
  EXPECT_THAT(error_of([&] { BatchIterator({}, vocab(), TaskKind::Classify, opt, nullptr); }),
              HasSubstr("shuffle needs a Generator"));
  opt.batch_size = 0;
  EXPECT_THAT(error_of([&] { BatchIterator({}, vocab(), TaskKind::Classify, opt, nullptr); }),
              HasSubstr("batch_size must be >= 1"));
}

// 1000 examples of lengths 1..40 in a scrambled order.
std::vector<Example> varied(size_t n) {
  std::vector<Example> ex;
  for (size_t i = 0; i < n; ++i) {
    size_t len = 1 + (i * 7919) % 40;
    ex.push_back(sentence(std::vector<std::string>(len, "a"), static_cast<int64_t>(i % 3)));
  }
  return ex;
}

std::vector<std::vector<size_t>> epoch(BatchIterator& it, int64_t* padded = nullptr) {
  std::vector<std::vector<size_t>> out;
  Batch b;
  while (it.next(b)) {
    out.push_back(b.indices);
    if (padded) *padded += b.ids.numel();
  }
  return out;
}

TEST(DataBatching, BucketingCoversEveryExampleOncePerEpoch) {
  std::vector<Example> ex = varied(1000);
  BatchOptions opt;
  opt.batch_size = 8;
  Generator gen(5);
  BatchIterator it(ex, vocab(), TaskKind::Classify, opt, &gen);
  EXPECT_EQ(it.batches_per_epoch(), 125);
  int64_t padded_bucketed = 0;
  for (int e = 0; e < 2; ++e) {
    std::vector<std::vector<size_t>> batches = epoch(it, e == 0 ? &padded_bucketed : nullptr);
    EXPECT_EQ(static_cast<int64_t>(batches.size()), it.batches_per_epoch());
    std::vector<size_t> seen;
    for (const auto& b : batches) seen.insert(seen.end(), b.begin(), b.end());
    std::sort(seen.begin(), seen.end());
    ASSERT_EQ(seen.size(), ex.size());
    for (size_t i = 0; i < seen.size(); ++i) ASSERT_EQ(seen[i], i) << "epoch " << e;
  }
  // Bucketing wastes far fewer padding positions than random batches do.
  opt.bucket_by_length = false;
  Generator gen2(5);
  BatchIterator plain(ex, vocab(), TaskKind::Classify, opt, &gen2);
  int64_t padded_plain = 0;
  epoch(plain, &padded_plain);
  int64_t real = 0;
  for (const Example& e : ex) real += static_cast<int64_t>(e.tokens.size());
  EXPECT_LT((padded_bucketed - real) * 10, padded_plain - real);
}

TEST(DataBatching, SeededShuffleIsDeterministicAndVariesByEpoch) {
  std::vector<Example> ex = varied(300);
  BatchOptions opt;
  opt.batch_size = 16;
  Generator g1(7), g2(7), g3(8);
  BatchIterator a(ex, vocab(), TaskKind::Classify, opt, &g1);
  BatchIterator b(ex, vocab(), TaskKind::Classify, opt, &g2);
  BatchIterator c(ex, vocab(), TaskKind::Classify, opt, &g3);
  auto a1 = epoch(a), b1 = epoch(b), c1 = epoch(c);
  EXPECT_EQ(a1, b1);
  EXPECT_NE(a1, c1);
  auto a2 = epoch(a);
  EXPECT_NE(a1, a2);  // reshuffled for the next epoch
  EXPECT_EQ(a2, epoch(b));
  // The batch order is random, not sorted by length.
  std::vector<size_t> first_lengths;
  for (const auto& batch : a1) first_lengths.push_back(ex[batch[0]].tokens.size());
  EXPECT_FALSE(std::is_sorted(first_lengths.begin(), first_lengths.end()));
}

TEST(DataBatching, ResetStartsAFreshEpoch) {
  std::vector<Example> ex = varied(50);
  BatchOptions opt;
  opt.batch_size = 10;
  opt.shuffle = false;
  BatchIterator it(ex, vocab(), TaskKind::Classify, opt, nullptr);
  Batch b;
  ASSERT_TRUE(it.next(b));
  ASSERT_TRUE(it.next(b));
  it.reset();
  EXPECT_EQ(epoch(it).size(), 5u);
}

}  // namespace
}  // namespace attn
