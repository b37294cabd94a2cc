// Entity F1 as conlleval computes it, on hand-made IOB1, BIO and BIOES
// sentences whose chunks are known.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "attn/train/metrics.h"
#include "test_util.h"

using namespace attn;
using ::testing::HasSubstr;
using testing_support::error_of;

namespace {
using Chunks = std::vector<Chunk>;
}

TEST(ChunkMetrics, Iob1UsesBOnlyBetweenAdjacentChunksOfOneType) {
  EXPECT_EQ(conll_chunks({"I-PER", "I-PER", "O", "I-LOC", "B-LOC", "I-LOC"}),
            (Chunks{{"PER", 0, 2}, {"LOC", 3, 4}, {"LOC", 4, 6}}));
}

TEST(ChunkMetrics, BioesEndsChunksAtEAndS) {
  EXPECT_EQ(conll_chunks({"B-PER", "E-PER", "S-LOC", "S-LOC", "O", "B-ORG", "I-ORG", "E-ORG"}),
            (Chunks{{"PER", 0, 2}, {"LOC", 2, 3}, {"LOC", 3, 4}, {"ORG", 5, 8}}));
  // After E- or S-, an I- or E- of the same type starts a new chunk.
  EXPECT_EQ(conll_chunks({"S-X", "I-X", "E-X", "E-X"}), (Chunks{{"X", 0, 1}, {"X", 1, 3}, {"X", 3, 4}}));
}

TEST(ChunkMetrics, EdgeCases) {
  // An I- with no B- starts a chunk, at the sentence start and after O.
  EXPECT_EQ(conll_chunks({"I-X"}), (Chunks{{"X", 0, 1}}));
  EXPECT_EQ(conll_chunks({"O", "I-X", "I-X"}), (Chunks{{"X", 1, 3}}));
  // An E- after O is a one-token chunk.
  EXPECT_EQ(conll_chunks({"O", "E-X", "O"}), (Chunks{{"X", 1, 2}}));
  // A span open at the sentence end is closed there.
  EXPECT_EQ(conll_chunks({"O", "B-X", "I-X"}), (Chunks{{"X", 1, 3}}));
  // A type switch inside a chunk ends it and starts another.
  EXPECT_EQ(conll_chunks({"B-PER", "I-LOC", "E-LOC"}), (Chunks{{"PER", 0, 1}, {"LOC", 1, 3}}));
  EXPECT_EQ(conll_chunks({"B-PER", "I-PER", "E-ORG"}), (Chunks{{"PER", 0, 2}, {"ORG", 2, 3}}));
  EXPECT_TRUE(conll_chunks({}).empty());
  EXPECT_TRUE(conll_chunks({"O", "O"}).empty());
}

TEST(ChunkMetrics, BioReadsTheSameThroughEitherFunction) {
  const std::vector<std::string> tags = {"B-PER", "I-PER", "O", "I-LOC", "I-LOC", "B-LOC", "I-ORG", "B-PER"};
  EXPECT_EQ(conll_chunks(tags), bio_chunks(tags));
}

TEST(ChunkMetrics, RefusesTagsOfNoScheme) {
  EXPECT_THAT(error_of([] { conll_chunks({"O", "X-PER"}); }),
              HasSubstr("tag 1 'X-PER' is not O, B-<type>, I-<type>, E-<type> or S-<type>"));
  EXPECT_THAT(error_of([] { conll_chunks({"PER"}); }), HasSubstr("tag 0 'PER'"));
  EXPECT_THAT(error_of([] { bio_chunks({"S-PER"}); }), HasSubstr("is not O, B-<type> or I-<type>"));
}

TEST(ChunkMetrics, F1CountsExactSpansAcrossSchemes) {
  // Gold in IOB1, predictions in BIO and BIOES: the same spans score alike.
  const std::vector<std::vector<std::string>> gold = {
      {"I-PER", "I-PER", "O", "I-LOC"},  // PER[0,2) LOC[3,4)
      {"I-ORG", "B-ORG", "O"},           // ORG[0,1) ORG[1,2)
  };
  const std::vector<std::vector<std::string>> pred = {
      {"B-PER", "E-PER", "O", "S-LOC"},  // both right
      {"B-ORG", "I-ORG", "S-MISC"},      // ORG[0,2) wrong span, MISC[2,3) spurious
  };
  const ChunkScores s = conll_chunk_f1(gold, pred);
  EXPECT_EQ(s.gold_chunks, 4);
  EXPECT_EQ(s.pred_chunks, 4);
  EXPECT_EQ(s.correct_chunks, 2);
  EXPECT_DOUBLE_EQ(s.precision, 0.5);
  EXPECT_DOUBLE_EQ(s.recall, 0.5);
  EXPECT_DOUBLE_EQ(s.f1, 0.5);
  // 1 right of 2 predicted and 3 gold: P 1/2, R 1/3, F1 2PR/(P+R) = 0.4.
  const ChunkScores t = conll_chunk_f1({{"S-A", "S-B", "S-C"}}, {{"S-A", "O", "S-X"}});
  EXPECT_DOUBLE_EQ(t.f1, 0.4);
  EXPECT_THAT(error_of([] { conll_chunk_f1({{"O", "O"}}, {{"O"}}); }), HasSubstr("sentence 0 has 2 gold tags"));
}
