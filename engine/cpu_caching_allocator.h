// The CPU's caching allocator, the default allocator of Device::CPU.
//
// Large blocks from the C library are mapped on allocation and unmapped on
// release, so without a cache every training step page-faults its working set
// in again. This allocator keeps freed blocks and hands them back to later
// requests of (nearly) the same size: nothing is returned to the operating
// system until the cache would exceed its limit or empty_cache() is called.
//
// Size classes: requests up to kCpuSmallLimit are rounded up to 64 bytes and
// reuse only blocks of exactly that size; larger ones are rounded up to 4 KiB
// pages and may reuse the smallest cached block that is at most a quarter
// larger (best fit). Every block is 64-byte aligned (a cache line; enough for
// any SIMD load the kernels make).
//
// The limit bounds the bytes the cache retains (blocks not in use): a freed
// block that would take the cache over it first makes room by releasing the
// largest cached blocks, and one larger than the limit is released at once.
//
// Under AddressSanitizer a cached block is poisoned, so a use after free into
// it is still reported ("use-after-poison"), and unpoisoned when handed out.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <unordered_map>

#include "attn/engine/allocator.h"

namespace attn {

constexpr size_t kCpuAlignment = 64;
constexpr size_t kCpuSmallLimit = size_t(1) << 16;  // 64 KiB
constexpr size_t kCpuLargeRound = size_t(1) << 12;  // 4 KiB page

// The size class of a request: the bytes of the block that serves it.
size_t cpu_round_allocation(size_t bytes);
// Whether a cached block of `block` bytes may serve a request rounded to `rounded`.
bool cpu_block_fits(size_t block, size_t rounded);

// What the cache holds beyond the base statistics.
struct CpuCacheStats {
  int64_t cached_bytes = 0;    // retained by the cache, not in use
  int64_t reserved_bytes = 0;  // held from the C library: in use (rounded) plus cached
  int64_t limit_bytes = 0;     // the cap on cached_bytes
  int64_t hits = 0;            // allocations served from the cache
  int64_t misses = 0;          // allocations that asked the C library
};

class CpuCachingAllocator final : public Allocator {
 public:
  explicit CpuCachingAllocator(size_t limit_bytes);
  ~CpuCachingAllocator() override;  // releases the cache (live blocks are the owners' concern)

  void* allocate(size_t bytes) override;
  void deallocate(void* ptr, size_t bytes) override;
  int64_t cached_bytes() const override;

  // Returns every cached block to the C library.
  void empty_cache();
  // Sets the cap on cached bytes; the cache shrinks at once if it is above it.
  void set_limit(size_t limit_bytes);
  CpuCacheStats cache_stats() const;

 private:
  void* fresh_block(size_t rounded, size_t requested);  // mutex_ held
  void release_largest_until(size_t target);             // mutex_ held: cached_ <= target after

  mutable std::mutex mutex_;
  std::multimap<size_t, void*> free_;          // cached blocks by size
  std::unordered_map<void*, size_t> size_of_;  // every block we hold, live or cached
  size_t cached_ = 0, reserved_ = 0, limit_ = 0;
  int64_t hits_ = 0, misses_ = 0;
};

// True in AddressSanitizer builds, where cached blocks are poisoned.
bool cpu_cache_poisons_freed_blocks();

// The default cap: a quarter of physical memory, at most 8 GiB.
size_t default_cpu_cache_limit();

// The process-wide CPU caching allocator (what allocator_for(Device::CPU)
// returns unless another was installed with set_allocator).
CpuCachingAllocator& cpu_caching_allocator();
void cpu_empty_cache();
void set_cpu_cache_limit(size_t limit_bytes);
CpuCacheStats cpu_cache_stats();

}  // namespace attn
