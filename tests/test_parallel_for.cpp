// engine/parallel.h: parallel_for's chunks cover [0, n) exactly once, honour
// the grain, stay within kChunksPerThread per thread, do not depend on which
// thread runs which chunk, and run inline where a fork would not pay or
// inside a parallel region.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <mutex>
#include <utility>
#include <vector>

#include "attn/engine/parallel.h"
#include "thread_count.h"

namespace attn {
namespace {

// The chunks one parallel_for handed out, sorted by their start.
std::vector<std::pair<int64_t, int64_t>> chunks_of(int64_t n, int64_t grain) {
  std::vector<std::pair<int64_t, int64_t>> chunks;
  std::mutex lock;
  parallel_for(n, grain, [&](int64_t begin, int64_t end) {
    std::lock_guard<std::mutex> hold(lock);
    chunks.emplace_back(begin, end);
  });
  std::sort(chunks.begin(), chunks.end());
  return chunks;
}

TEST(ParallelFor, ChunksCoverTheRangeOnceWithinTheGrainAndTheChunkLimit) {
  for (int threads : {1, 2, 3}) {
    ThreadCount count(threads);
    for (const auto& [n, grain] : std::vector<std::pair<int64_t, int64_t>>{
             {1, 1}, {7, 1}, {100, 10}, {100, 40}, {1000, 1}, {1 << 20, kParallelGrain}, {5, 100}, {64, 0}}) {
      SCOPED_TRACE(std::to_string(threads) + " threads, n " + std::to_string(n) + ", grain " + std::to_string(grain));
      const auto chunks = chunks_of(n, grain);
      ASSERT_FALSE(chunks.empty());
      int64_t next = 0;
      for (const auto& [begin, end] : chunks) {
        ASSERT_EQ(begin, next) << "a gap or an overlap";
        ASSERT_LT(begin, end) << "an empty chunk";
        next = end;
      }
      EXPECT_EQ(next, n);
      EXPECT_LE(static_cast<int64_t>(chunks.size()), threads * kChunksPerThread);
      if (n <= grain || threads == 1) {
        EXPECT_EQ(chunks.size(), 1u) << "work this small runs inline";
      } else {
        EXPECT_GE(static_cast<int64_t>(chunks.size()), std::min<int64_t>(n, threads));
        // Chunks are shorter than the grain only where n / grain gives fewer
        // chunks than threads.
        if (n / std::max<int64_t>(grain, 1) >= threads) {
          for (const auto& [begin, end] : chunks) EXPECT_GE(end - begin, grain);
        }
      }
    }
  }
}

TEST(ParallelFor, ChunkBoundsAreTheSameOnEveryRun) {
  // Which thread takes which chunk changes from run to run; the chunks do not.
  ThreadCount count(2);
  const auto first = chunks_of(100000, 1000);
  EXPECT_GT(first.size(), 2u) << "more chunks than threads, so that a faster thread can take more";
  for (int run = 0; run < 20; ++run) ASSERT_EQ(chunks_of(100000, 1000), first);
}

TEST(ParallelFor, RunsInlineInsideAParallelRegion) {
  ThreadCount count(2);
  std::vector<int64_t> calls(2, 0);
  int team = 0;
#pragma omp parallel num_threads(2)
  {
    const int id = omp_get_thread_num();
#pragma omp single
    team = omp_get_num_threads();
    parallel_for(1 << 20, 1, [&](int64_t begin, int64_t end) {
      EXPECT_EQ(begin, 0);
      EXPECT_EQ(end, 1 << 20);
      EXPECT_EQ(omp_get_thread_num(), id);
      ++calls[id];
    });
  }
  if (team < 2) GTEST_SKIP() << "OpenMP gave this region one thread: it is not an active parallel region";
  EXPECT_EQ(calls[0], 1);
  EXPECT_EQ(calls[1], 1);
}

}  // namespace
}  // namespace attn
