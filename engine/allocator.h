// One allocator per device. Each counts the bytes it has handed out (current
// and peak, the peak resettable) and the bytes its cache retains, so
// benchmarks can report memory use. Both devices' defaults cache freed blocks
// (engine/cpu_caching_allocator.h, engine/cuda/cuda_allocator.cu).
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "attn/engine/device.h"

namespace attn {

struct MemoryStats {
  int64_t current_bytes = 0;
  int64_t peak_bytes = 0;
  int64_t allocations = 0;  // number of allocate() calls since start
  int64_t cached_bytes = 0; // freed blocks a caching allocator retains for reuse (not in use, not in current_bytes)
};

class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual void* allocate(size_t bytes) = 0;
  virtual void deallocate(void* ptr, size_t bytes) = 0;

  MemoryStats stats() const;
  // Bytes retained by a cache (freed, not yet returned to the system); 0 without one.
  virtual int64_t cached_bytes() const { return 0; }
  // Sets the peak to the current level, so the next peak is that of the work that follows.
  void reset_peak();

 protected:
  void count_allocation(size_t bytes);
  void count_release(size_t bytes);

 private:
  std::atomic<int64_t> current_{0};
  std::atomic<int64_t> peak_{0};
  std::atomic<int64_t> allocations_{0};
};

// The allocator of a device. The CUDA slot throws on a build without CUDA.
Allocator& allocator_for(Device device);

// Installs the allocator of a device (the CUDA backend registers its own).
void set_allocator(Device device, Allocator* allocator);

}  // namespace attn
