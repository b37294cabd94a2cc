// The CPU caching allocator: reuse of freed blocks by size class, its
// statistics, the cap on retained bytes, empty_cache, alignment, zero-size
// and impossible requests, several threads at once, and (in AddressSanitizer
// builds) a use after free into a cached block still being reported.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "attn/engine/allocator.h"
#include "attn/engine/cpu_caching_allocator.h"
#include "attn/engine/error.h"
#include "attn/engine/tensor.h"

namespace attn {
namespace {

constexpr size_t kMiB = size_t(1) << 20;

TEST(CpuCachingAllocator, SizeClasses) {
  EXPECT_EQ(cpu_round_allocation(0), 64u);
  EXPECT_EQ(cpu_round_allocation(1), 64u);
  EXPECT_EQ(cpu_round_allocation(64), 64u);
  EXPECT_EQ(cpu_round_allocation(65), 128u);
  EXPECT_EQ(cpu_round_allocation(kCpuSmallLimit), kCpuSmallLimit);
  EXPECT_EQ(cpu_round_allocation(kCpuSmallLimit + 1), kCpuSmallLimit + kCpuLargeRound);
  // Small classes reuse only their own size; large ones a block at most a quarter larger.
  EXPECT_TRUE(cpu_block_fits(128, 128));
  EXPECT_FALSE(cpu_block_fits(192, 128));
  EXPECT_FALSE(cpu_block_fits(64, 128));
  EXPECT_TRUE(cpu_block_fits(5 * kMiB / 4, kMiB));
  EXPECT_FALSE(cpu_block_fits(5 * kMiB / 4 + kCpuLargeRound, kMiB));
}

TEST(CpuCachingAllocator, FreedBlockIsReusedBySameSizeClass) {
  CpuCachingAllocator a(64 * kMiB);
  void* p = a.allocate(1000);
  a.deallocate(p, 1000);
  void* q = a.allocate(990);  // same 1024-byte class
  EXPECT_EQ(q, p);
  void* r = a.allocate(2000);  // another class: a fresh block
  EXPECT_NE(r, p);
  a.deallocate(q, 990);
  a.deallocate(r, 2000);

  void* big = a.allocate(3 * kMiB);
  a.deallocate(big, 3 * kMiB);
  EXPECT_EQ(a.allocate(3 * kMiB - 100000), big);  // within a quarter: best fit reuses it
  a.deallocate(big, 3 * kMiB - 100000);
  void* small = a.allocate(kMiB);  // the 3 MiB block is too wasteful for 1 MiB
  EXPECT_NE(small, big);
  a.deallocate(small, kMiB);
  const CpuCacheStats s = a.cache_stats();
  EXPECT_EQ(s.hits, 2);
  EXPECT_EQ(s.misses, 4);
}

TEST(CpuCachingAllocator, StatsSeparateInUseFromCached) {
  CpuCachingAllocator a(64 * kMiB);
  void* p = a.allocate(1000);
  void* q = a.allocate(100000);
  MemoryStats s = a.stats();
  EXPECT_EQ(s.current_bytes, 101000);
  EXPECT_EQ(s.peak_bytes, 101000);
  EXPECT_EQ(s.allocations, 2);
  EXPECT_EQ(s.cached_bytes, 0);
  a.deallocate(q, 100000);
  s = a.stats();
  EXPECT_EQ(s.current_bytes, 1000);
  EXPECT_EQ(s.peak_bytes, 101000);
  EXPECT_EQ(s.cached_bytes, static_cast<int64_t>(cpu_round_allocation(100000)));
  EXPECT_EQ(a.cache_stats().reserved_bytes,
            static_cast<int64_t>(cpu_round_allocation(100000) + cpu_round_allocation(1000)));
  a.deallocate(p, 1000);
  EXPECT_EQ(a.stats().current_bytes, 0);
  EXPECT_EQ(a.stats().cached_bytes, static_cast<int64_t>(cpu_round_allocation(100000) + cpu_round_allocation(1000)));
}

TEST(CpuCachingAllocator, EmptyCacheReturnsEverything) {
  CpuCachingAllocator a(64 * kMiB);
  std::vector<void*> blocks;
  for (size_t n : {10u, 1000u, 70000u, 1u << 22}) blocks.push_back(a.allocate(n));
  void* live = a.allocate(5000);
  size_t i = 0;
  for (size_t n : {10u, 1000u, 70000u, 1u << 22}) a.deallocate(blocks[i++], n);
  EXPECT_GT(a.stats().cached_bytes, 4 << 20);
  a.empty_cache();
  EXPECT_EQ(a.stats().cached_bytes, 0);
  EXPECT_EQ(a.cache_stats().reserved_bytes, static_cast<int64_t>(cpu_round_allocation(5000)));  // only the live block
  a.deallocate(live, 5000);
  a.empty_cache();
  EXPECT_EQ(a.cache_stats().reserved_bytes, 0);
}

TEST(CpuCachingAllocator, CachedBytesNeverExceedTheLimit) {
  const size_t limit = 2 * kMiB;
  CpuCachingAllocator a(limit);
  std::mt19937 rng(7);
  std::uniform_int_distribution<size_t> size(1, 900000);
  std::vector<std::pair<void*, size_t>> live;
  for (int step = 0; step < 400; ++step) {
    if (live.empty() || rng() % 2) {
      const size_t n = size(rng);
      live.emplace_back(a.allocate(n), n);
    } else {
      const size_t k = rng() % live.size();
      a.deallocate(live[k].first, live[k].second);
      live.erase(live.begin() + static_cast<long>(k));
    }
    ASSERT_LE(a.stats().cached_bytes, static_cast<int64_t>(limit));
  }
  for (auto& [p, n] : live) a.deallocate(p, n);
  EXPECT_LE(a.stats().cached_bytes, static_cast<int64_t>(limit));
  EXPECT_GT(a.cache_stats().hits, 0);

  void* huge = a.allocate(3 * kMiB);  // larger than the limit: released at once when freed
  a.deallocate(huge, 3 * kMiB);
  EXPECT_LE(a.stats().cached_bytes, static_cast<int64_t>(limit));

  a.set_limit(kMiB / 2);  // lowering the limit shrinks the cache at once
  EXPECT_LE(a.stats().cached_bytes, static_cast<int64_t>(kMiB / 2));
  a.set_limit(0);
  EXPECT_EQ(a.stats().cached_bytes, 0);
  EXPECT_EQ(a.cache_stats().reserved_bytes, 0);
}

TEST(CpuCachingAllocator, BlocksAreAlignedAndUsable) {
  CpuCachingAllocator a(64 * kMiB);
  for (size_t n : {size_t(0), size_t(1), size_t(63), size_t(4097), size_t(65537), size_t(3) << 20}) {
    void* p = a.allocate(n);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % kCpuAlignment, 0u) << n << " bytes";
    std::memset(p, 0xAB, cpu_round_allocation(n));  // the whole class is usable
    a.deallocate(p, n);
    void* again = a.allocate(n);  // the cached block, still aligned
    EXPECT_EQ(again, p);
    a.deallocate(again, n);
  }
  EXPECT_EQ(a.stats().current_bytes, 0);
}

TEST(CpuCachingAllocator, ImpossibleRequestThrowsAClearError) {
  CpuCachingAllocator a(64 * kMiB);
  EXPECT_THROW(a.allocate(SIZE_MAX), Error);  // refused before asking the C library
  if (cpu_cache_poisons_freed_blocks())
    GTEST_SKIP() << "AddressSanitizer's allocator aborts on an impossible request instead of returning null; "
                    "the Release pass of scripts/test.sh checks the error";
  try {
    a.allocate(size_t(1) << 62);
    FAIL() << "expected an out-of-memory error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("out of memory"), std::string::npos) << e.what();
  }
  EXPECT_EQ(a.stats().current_bytes, 0);
}

TEST(CpuCachingAllocator, SeveralThreadsAllocateAndFree) {
  CpuCachingAllocator a(8 * kMiB);
  constexpr int kThreads = 4, kSteps = 2000;
  std::vector<int> failures(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(100 + t);
      std::vector<std::pair<unsigned char*, size_t>> live;
      for (int step = 0; step < kSteps; ++step) {
        if (live.size() < 8 && (live.empty() || rng() % 3)) {
          const size_t n = 1 + rng() % 200000;
          auto* p = static_cast<unsigned char*>(a.allocate(n));
          std::memset(p, t + 1, n);  // a block shared with another thread would be overwritten
          live.emplace_back(p, n);
        } else {
          const size_t k = rng() % live.size();
          auto [p, n] = live[k];
          for (size_t i = 0; i < n; i += 97) failures[t] += p[i] != t + 1;
          a.deallocate(p, n);
          live.erase(live.begin() + static_cast<long>(k));
        }
      }
      for (auto& [p, n] : live) a.deallocate(p, n);
    });
  }
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], 0) << "thread " << t;
  EXPECT_EQ(a.stats().current_bytes, 0);
  EXPECT_EQ(a.stats().allocations, a.cache_stats().hits + a.cache_stats().misses);
  EXPECT_GT(a.cache_stats().hits, 0);
  EXPECT_LE(a.stats().cached_bytes, static_cast<int64_t>(8 * kMiB));
  EXPECT_EQ(a.cache_stats().reserved_bytes, a.stats().cached_bytes);  // nothing live: all held bytes are cached
}

TEST(CpuCachingAllocator, IsTheDefaultCpuAllocatorAndTensorsReuseIt) {
  ASSERT_EQ(&allocator_for(Device::CPU), static_cast<Allocator*>(&cpu_caching_allocator()));
  const size_t limit = cpu_cache_stats().limit_bytes;
  EXPECT_EQ(limit, default_cpu_cache_limit());
  EXPECT_GT(limit, 0u);
  // Blocks earlier tests left of the same size class could serve the second
  // request instead: start from an empty cache.
  cpu_empty_cache();
  EXPECT_EQ(cpu_cache_stats().cached_bytes, 0);
  const void* first = nullptr;
  {
    Tensor t = empty({1000, 300}, DType::F32);
    first = t.raw_data();
  }
  EXPECT_GE(cpu_cache_stats().cached_bytes, 1200000);
  Tensor again = empty({1000, 300}, DType::F32);
  EXPECT_EQ(again.raw_data(), first);
}

TEST(CpuCachingAllocator, UseAfterFreeIntoACachedBlockIsReportedUnderAsan) {
  if (!cpu_cache_poisons_freed_blocks())
    GTEST_SKIP() << "only an AddressSanitizer build poisons cached blocks (scripts/test.sh runs one)";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  CpuCachingAllocator a(64 * kMiB);
  auto* p = static_cast<volatile float*>(a.allocate(256 * sizeof(float)));
  a.deallocate(const_cast<float*>(p), 256 * sizeof(float));
  EXPECT_DEATH({ p[3] = 1.0f; }, "use-after-poison");
  void* q = a.allocate(256 * sizeof(float));  // handed out again: unpoisoned and writable
  EXPECT_EQ(q, const_cast<float*>(p));
  static_cast<float*>(q)[3] = 2.0f;
  a.deallocate(q, 256 * sizeof(float));
}

}  // namespace
}  // namespace attn
