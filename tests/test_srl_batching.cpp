// The srl task's batches (train/data/batching.h): the predicate indicator
// marks exactly the predicate's position, padding and truncation included,
// the tags are the tag task's, and an example without a predicate inside its
// sentence is refused.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "attn/train/data/batching.h"
#include "test_util.h"

namespace attn {
namespace {

Example srl_example(std::vector<std::string> tokens, int64_t predicate) {
  Example e;
  e.tags.assign(tokens.size(), 1);
  e.tokens = std::move(tokens);
  e.predicate = predicate;
  return e;
}

Batch only_batch(const std::vector<Example>& examples, int64_t max_len = 0) {
  BatchOptions o;
  o.batch_size = 8;
  o.shuffle = false;
  o.bucket_by_length = false;
  o.max_len = max_len;
  BatchIterator it(examples, Vocabulary::from_words({"a", "b", "c"}), TaskKind::Srl, o, nullptr);
  Batch batch;
  EXPECT_TRUE(it.next(batch));
  return batch;
}

TEST(SrlBatching, ThePredicateIndicatorMarksThePredicateOnly) {
  const Batch b = only_batch({srl_example({"a", "b", "c"}, 1), srl_example({"c", "a"}, 0)});
  ASSERT_TRUE(b.predicate.defined());
  EXPECT_EQ(b.predicate.shape(), Shape({2, 3}));
  EXPECT_EQ(b.predicate.dtype(), DType::I64);
  EXPECT_EQ(b.predicate.to_vector(), (std::vector<double>{0, 1, 0, 1, 0, 0}));
  // The tags are the tag task's: one per token, kIgnoreTag at padding.
  EXPECT_EQ(b.tags.to_vector(), (std::vector<double>{1, 1, 1, 1, 1, static_cast<double>(kIgnoreTag)}));
  EXPECT_EQ(b.global_tokens, 5);
}

TEST(SrlBatching, APredicateCutOffByMaxLenMarksNothing) {
  const Batch b = only_batch({srl_example({"a", "b", "c"}, 2), srl_example({"c", "a", "b"}, 1)}, 2);
  EXPECT_EQ(b.predicate.to_vector(), (std::vector<double>{0, 0, 0, 1}));
}

TEST(SrlBatching, APredicateOutsideItsSentenceIsRefused) {
  for (int64_t at : {-1, 3}) {
    EXPECT_THAT(testing_support::error_of([&] { only_batch({srl_example({"a", "b", "c"}, at)}); }),
                ::testing::HasSubstr("example 0 has its predicate at " + std::to_string(at) +
                                     ", outside its 3 tokens"));
  }
}

}  // namespace
}  // namespace attn
