#include "attn/engine/allocator.h"

#include "attn/engine/cpu_caching_allocator.h"
#include "attn/engine/cuda/cuda_backend.h"
#include "attn/engine/error.h"

namespace attn {

MemoryStats Allocator::stats() const {
  return {current_.load(), peak_.load(), allocations_.load(), cached_bytes()};
}

void Allocator::reset_peak() { peak_.store(current_.load()); }

void Allocator::count_allocation(size_t bytes) {
  int64_t now = current_.fetch_add(static_cast<int64_t>(bytes)) + static_cast<int64_t>(bytes);
  int64_t peak = peak_.load();
  while (now > peak && !peak_.compare_exchange_weak(peak, now)) {
  }
  allocations_.fetch_add(1);
}

void Allocator::count_release(size_t bytes) { current_.fetch_sub(static_cast<int64_t>(bytes)); }

namespace {

Allocator* g_allocators[kDeviceCount] = {nullptr, nullptr};

}  // namespace

Allocator& allocator_for(Device device) {
  if (device == Device::CPU) return g_allocators[0] ? *g_allocators[0] : cpu_caching_allocator();
  Allocator* a = g_allocators[static_cast<int>(device)];
  // The CUDA build's caching allocator serves CUDA unless another was installed.
  if (!a && device == Device::CUDA) a = cuda_allocator();
  if (!a) throw NotImplemented("allocate", device);
  return *a;
}

void set_allocator(Device device, Allocator* allocator) {
  g_allocators[static_cast<int>(device)] = allocator;
}

}  // namespace attn
