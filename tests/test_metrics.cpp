// Metrics on hand-worked examples: accuracy, macro-F1 (with a class never
// predicted), Pearson, Spearman with ties, MSE, per-token accuracy with an
// ignore mask, and BIO chunk F1 with conlleval's chunk rules.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "test_util.h"
#include "attn/engine/error.h"
#include "attn/train/metrics.h"

namespace attn {
namespace {

using namespace testing_support;

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(Metrics, Accuracy) {
  EXPECT_DOUBLE_EQ(accuracy({1, 2, 3, 1}, {1, 2, 0, 0}), 0.5);
  EXPECT_DOUBLE_EQ(accuracy({}, {}), 0.0);
  EXPECT_THAT(error_of([] { accuracy({1}, {1, 2}); }), HasSubstr("accuracy: inputs have different lengths: 1 vs 2"));
}

TEST(Metrics, MacroF1CountsAClassNeverPredictedAsZero) {
  // class 0: tp 2, fp 1, fn 0 -> 0.8; class 1: tp 1, fp 1, fn 1 -> 0.5;
  // class 2 (gold only, never predicted) -> 0.
  EXPECT_NEAR(macro_f1({0, 0, 0, 1, 1}, {0, 0, 1, 1, 2}), (0.8 + 0.5 + 0.0) / 3, 1e-12);
  // A class predicted but absent from gold also counts (union of classes).
  EXPECT_NEAR(macro_f1({0, 1}, {0, 0}), (2.0 / 3 + 0.0) / 2, 1e-12);
  EXPECT_DOUBLE_EQ(macro_f1({3, 4, 3}, {3, 4, 3}), 1.0);
}

TEST(Metrics, Pearson) {
  EXPECT_NEAR(pearson({1, 2, 3, 4}, {2, 4, 6, 8}), 1.0, 1e-12);
  EXPECT_NEAR(pearson({1, 2, 3, 4}, {8, 6, 4, 2}), -1.0, 1e-12);
  // deviations (-1.5, -.5, .5, 1.5) and (-1.5, .5, -.5, 1.5): 4 / sqrt(5 * 5)
  EXPECT_NEAR(pearson({1, 2, 3, 4}, {1, 3, 2, 4}), 0.8, 1e-12);
  EXPECT_TRUE(std::isnan(pearson({1, 1, 1}, {1, 2, 3})));
  EXPECT_TRUE(std::isnan(pearson({1}, {2})));
}

TEST(Metrics, SpearmanAveragesTiedRanks) {
  EXPECT_THAT(average_ranks({10, 20, 20, 30}), ElementsAre(1.0, 2.5, 2.5, 4.0));
  EXPECT_THAT(average_ranks({3, 1, 3, 3}), ElementsAre(3.0, 1.0, 3.0, 3.0));
  // ranks (1, 2.5, 2.5, 4) vs (1, 3, 2, 4): 4.5 / sqrt(4.5 * 5)
  EXPECT_NEAR(spearman({1, 2, 2, 3}, {1, 3, 2, 4}), 4.5 / std::sqrt(22.5), 1e-12);
  // Monotone but not linear: Spearman 1, Pearson below 1.
  EXPECT_NEAR(spearman({1, 2, 3}, {1, 10, 100}), 1.0, 1e-12);
  EXPECT_LT(pearson({1, 2, 3}, {1, 10, 100}), 0.99);
  EXPECT_THAT(error_of([] { average_ranks({1, NAN}); }), HasSubstr("is NaN"));
}

TEST(Metrics, Mse) {
  EXPECT_DOUBLE_EQ(mse({1, 2}, {0, 4}), 2.5);
  EXPECT_DOUBLE_EQ(mse({}, {}), 0.0);
}

TEST(Metrics, TokenAccuracyIgnoresMaskedPositions) {
  EXPECT_DOUBLE_EQ(token_accuracy({1, 2, 3, 4}, {1, 0, 3, 0}, std::vector<bool>{false, true, false, true}), 1.0);
  EXPECT_DOUBLE_EQ(token_accuracy({1, 2, 3, 4}, {1, 0, 3, 0}, std::vector<bool>(4, false)), 0.5);
  EXPECT_DOUBLE_EQ(token_accuracy({1, 2, 3, 4}, {1, 0, 3, 5}, int64_t{0}), 2.0 / 3);
  EXPECT_DOUBLE_EQ(token_accuracy({1}, {1}, std::vector<bool>{true}), 0.0);
}

TEST(Metrics, BioChunksFollowConlleval) {
  std::vector<Chunk> c = bio_chunks({"B-PER", "I-PER", "O", "I-LOC", "I-LOC", "B-LOC", "I-ORG", "B-PER"});
  ASSERT_EQ(c.size(), 5u);
  EXPECT_EQ(c[0], (Chunk{"PER", 0, 2}));
  EXPECT_EQ(c[1], (Chunk{"LOC", 3, 5}));  // an I- after O starts a chunk
  EXPECT_EQ(c[2], (Chunk{"LOC", 5, 6}));  // B- always starts a new one
  EXPECT_EQ(c[3], (Chunk{"ORG", 6, 7}));  // an I- of another type starts a new one
  EXPECT_EQ(c[4], (Chunk{"PER", 7, 8}));  // a chunk open at the end is closed
  EXPECT_EQ(bio_chunks({"I-X"}), (std::vector<Chunk>{{"X", 0, 1}}));
  EXPECT_TRUE(bio_chunks({"O", "O"}).empty());
  EXPECT_THAT(error_of([] { bio_chunks({"O", "X-PER"}); }), HasSubstr("tag 1 'X-PER' is not O, B-<type> or I-<type>"));
}

TEST(Metrics, BioChunkF1IsExactMatch) {
  std::vector<std::vector<std::string>> gold = {
      {"B-PER", "I-PER", "O", "B-LOC"},  // pred: LOC mislabelled ORG
      {"O", "B-MISC", "I-MISC", "O"},    // pred: I- after O gives MISC [2, 3): wrong span
      {"I-LOC", "I-LOC"},                // pred: B-LOC I-LOC is the same chunk
      {"B-PER", "O"},                    // pred: missed
  };
  std::vector<std::vector<std::string>> pred = {
      {"B-PER", "I-PER", "O", "B-ORG"},
      {"O", "O", "I-MISC", "O"},
      {"B-LOC", "I-LOC"},
      {"O", "O"},
  };
  ChunkScores s = bio_chunk_f1(gold, pred);
  EXPECT_EQ(s.gold_chunks, 5);
  EXPECT_EQ(s.pred_chunks, 4);
  EXPECT_EQ(s.correct_chunks, 2);
  EXPECT_DOUBLE_EQ(s.precision, 0.5);
  EXPECT_DOUBLE_EQ(s.recall, 0.4);
  EXPECT_NEAR(s.f1, 2 * 0.5 * 0.4 / 0.9, 1e-12);
  ChunkScores none = bio_chunk_f1({{"O"}}, {{"B-X"}});
  EXPECT_EQ(none.precision, 0.0);
  EXPECT_EQ(none.recall, 0.0);
  EXPECT_EQ(none.f1, 0.0);
  EXPECT_THAT(error_of([] { bio_chunk_f1({{"O", "O"}}, {{"O"}}); }),
              HasSubstr("sentence 0 has 2 gold tags but 1 predicted"));
}

}  // namespace
}  // namespace attn
