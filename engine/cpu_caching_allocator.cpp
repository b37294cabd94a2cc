#include "attn/engine/cpu_caching_allocator.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <string>

#include "attn/engine/asan.h"
#include "attn/engine/error.h"

namespace attn {

size_t cpu_round_allocation(size_t bytes) {
  if (bytes == 0) return kCpuAlignment;
  ATTN_CHECK(bytes <= SIZE_MAX - kCpuLargeRound, "cpu allocate", "request of ", bytes, " bytes is too large");
  if (bytes <= kCpuSmallLimit) return (bytes + kCpuAlignment - 1) / kCpuAlignment * kCpuAlignment;
  return (bytes + kCpuLargeRound - 1) / kCpuLargeRound * kCpuLargeRound;
}

bool cpu_block_fits(size_t block, size_t rounded) {
  if (block < rounded) return false;
  if (rounded <= kCpuSmallLimit) return block == rounded;
  return block - rounded <= rounded / 4;
}

CpuCachingAllocator::CpuCachingAllocator(size_t limit_bytes) : limit_(limit_bytes) {}

CpuCachingAllocator::~CpuCachingAllocator() { empty_cache(); }

void* CpuCachingAllocator::allocate(size_t bytes) {
  const size_t rounded = cpu_round_allocation(bytes);
  void* p = nullptr;
  size_t block = rounded;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = free_.lower_bound(rounded);
    if (it != free_.end() && cpu_block_fits(it->first, rounded)) {
      p = it->second;
      block = it->first;
      cached_ -= block;
      free_.erase(it);
      ++hits_;
    } else {
      p = fresh_block(rounded, bytes);
      size_of_[p] = rounded;
      reserved_ += rounded;
      ++misses_;
    }
  }
  asan::unpoison(p, block);
  count_allocation(bytes);
  return p;
}

void CpuCachingAllocator::deallocate(void* ptr, size_t bytes) {
  if (!ptr) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = size_of_.find(ptr);
    ATTN_CHECK(it != size_of_.end(), "cpu deallocate", "pointer was not allocated by this allocator");
    const size_t block = it->second;
    if (block > limit_) {  // could never be cached: back to the C library
      reserved_ -= block;
      size_of_.erase(it);
      std::free(ptr);
    } else {
      if (cached_ + block > limit_) release_largest_until(limit_ - block);
      asan::poison(ptr, block);
      free_.emplace(block, ptr);
      cached_ += block;
    }
  }
  count_release(bytes);
}

int64_t CpuCachingAllocator::cached_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<int64_t>(cached_);
}

void CpuCachingAllocator::empty_cache() {
  std::lock_guard<std::mutex> lock(mutex_);
  release_largest_until(0);
}

void CpuCachingAllocator::set_limit(size_t limit_bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  limit_ = limit_bytes;
  if (cached_ > limit_) release_largest_until(limit_);
}

CpuCacheStats CpuCachingAllocator::cache_stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return {static_cast<int64_t>(cached_), static_cast<int64_t>(reserved_), static_cast<int64_t>(limit_), hits_,
          misses_};
}

void* CpuCachingAllocator::fresh_block(size_t rounded, size_t requested) {
  void* p = std::aligned_alloc(kCpuAlignment, rounded);
  if (!p && cached_ > 0) {
    release_largest_until(0);  // blocks of other sizes may be what the C library needs
    p = std::aligned_alloc(kCpuAlignment, rounded);
  }
  if (!p)
    throw Error("cpu allocate: out of memory allocating " + std::to_string(requested) + " bytes (block of " +
                std::to_string(rounded) + " bytes; " + std::to_string(reserved_) + " bytes held by this allocator)");
  return p;
}

void CpuCachingAllocator::release_largest_until(size_t target) {
  while (cached_ > target && !free_.empty()) {
    auto last = std::prev(free_.end());
    asan::unpoison(last->second, last->first);  // the C library writes its bookkeeping into freed memory
    std::free(last->second);
    size_of_.erase(last->second);
    reserved_ -= last->first;
    cached_ -= last->first;
    free_.erase(last);
  }
}

bool cpu_cache_poisons_freed_blocks() { return asan::kEnabled; }

size_t default_cpu_cache_limit() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  const size_t cap = size_t(8) << 30;
  if (pages <= 0 || page <= 0) return cap;
  return std::min(cap, static_cast<size_t>(pages) * static_cast<size_t>(page) / 4);
}

// Never destroyed: tensors in static objects may be freed after main returns.
CpuCachingAllocator& cpu_caching_allocator() {
  static CpuCachingAllocator* a = new CpuCachingAllocator(default_cpu_cache_limit());
  return *a;
}

void cpu_empty_cache() { cpu_caching_allocator().empty_cache(); }
void set_cpu_cache_limit(size_t limit_bytes) { cpu_caching_allocator().set_limit(limit_bytes); }
CpuCacheStats cpu_cache_stats() { return cpu_caching_allocator().cache_stats(); }

}  // namespace attn
