// The CUDA side of engine/cuda/cuda_backend.h: GPU presence, the caching device
// allocator, host/device copies.
//
// Every kernel of the backend runs on the legacy default stream, so a block
// freed by the host may be handed to the next request at once: any kernel
// that uses it afterwards is queued behind the kernels that used it before.
#include <cuda_runtime.h>

#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "attn/engine/allocator.h"
#include "attn/engine/cuda/cuda_backend.h"
#include "attn/engine/cuda/cuda_check.h"
#include "attn/engine/error.h"

namespace attn {

namespace {

struct DeviceQuery {
  int count = 0;
  std::string why;  // the runtime's answer when there is no device
};

const DeviceQuery& device_query() {
  static const DeviceQuery q = [] {
    DeviceQuery r;
    cudaError_t status = cudaGetDeviceCount(&r.count);
    if (status != cudaSuccess) {
      r.count = 0;
      r.why = std::string(cudaGetErrorName(status)) + ": " + cudaGetErrorString(status);
      cudaGetLastError();  // not sticky, but leave no trace for the next check
    } else if (r.count == 0) {
      r.why = "cudaGetDeviceCount found 0 devices";
    }
    return r;
  }();
  return q;
}

std::string mib(size_t bytes) { return std::to_string(bytes / double(1 << 20)).substr(0, 8) + " MiB"; }

class CudaCachingAllocator final : public Allocator {
 public:
  void* allocate(size_t bytes) override {
    require_cuda("cuda allocate");
    const size_t rounded = cuda_round_allocation(bytes);
    void* p = nullptr;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = free_.lower_bound(rounded);
      if (it != free_.end() && cuda_block_fits(it->first, rounded)) {
        p = it->second;
        cached_ -= it->first;
        free_.erase(it);
      } else {
        p = fresh_block(rounded, bytes);
        size_of_[p] = rounded;
        reserved_ += rounded;
      }
    }
#ifdef ATTN_CUDA_EMULATED
    emu::mark_block_in_use(p, bytes, rounded);
#endif
    // The requested bytes only: in the emulated build the rest of the block is poisoned.
    if (cuda_sentinel_fill()) ATTN_CUDA_CHECK("cuda allocate", cudaMemset(p, 0xFF, bytes));
    count_allocation(bytes);
    return p;
  }

  void deallocate(void* ptr, size_t bytes) override {
    if (!ptr) return;
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = size_of_.find(ptr);
    if (it != size_of_.end()) {  // always found: only our blocks come back
#ifdef ATTN_CUDA_EMULATED
      emu::mark_block_cached(ptr, it->second);  // a use after free is reported
#endif
      free_.emplace(it->second, ptr);
      cached_ += it->second;
    }
    count_release(bytes);
  }

  void empty_cache() {
    std::lock_guard<std::mutex> lock(mutex_);
    release_cached();
  }

  size_t cached() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return cached_;
  }
  int64_t cached_bytes() const override { return static_cast<int64_t>(cached()); }
  size_t reserved() {
    std::lock_guard<std::mutex> lock(mutex_);
    return reserved_;
  }

 private:
  // Called with mutex_ held.
  void* fresh_block(size_t rounded, size_t requested) {
    void* p = nullptr;
    cudaError_t status = cudaMalloc(&p, rounded);
    if (status == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      release_cached();  // blocks of other sizes may be what the driver needs
      status = cudaMalloc(&p, rounded);
    }
    if (status == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      size_t free_b = 0, total_b = 0;
      cudaMemGetInfo(&free_b, &total_b);
      cudaGetLastError();
      throw Error("cuda allocate: out of GPU memory allocating " + std::to_string(requested) + " bytes (block of " +
                  std::to_string(rounded) + " bytes; " + mib(reserved_) + " held by this allocator, " +
                  mib(free_b) + " free of " + mib(total_b) + " on the device)");
    }
    if (status != cudaSuccess) throw_cuda_error("cuda allocate", "cudaMalloc", status, __FILE__, __LINE__);
    return p;
  }

  void release_cached() {
    for (auto& [size, p] : free_) {
      cudaFree(p);
      size_of_.erase(p);
      reserved_ -= size;
    }
    free_.clear();
    cached_ = 0;
  }

  mutable std::mutex mutex_;
  std::multimap<size_t, void*> free_;         // cached blocks by size
  std::unordered_map<void*, size_t> size_of_;  // every block we hold, live or cached
  size_t cached_ = 0, reserved_ = 0;
};

// Never destroyed: tensors in static objects may be freed after main returns,
// and the CUDA runtime may already be gone by then.
CudaCachingAllocator& the_allocator() {
  static CudaCachingAllocator* a = new CudaCachingAllocator();
  return *a;
}

}  // namespace

int cuda_device_count() { return device_query().count; }

void require_cuda(const char* op) {
  const DeviceQuery& q = device_query();
  if (q.count > 0) return;
  throw Error(std::string(op) + ": no CUDA GPU is visible (" + q.why + ")");
}

void cuda_synchronize() {
  if (cuda_available()) ATTN_CUDA_CHECK("cuda_synchronize", cudaDeviceSynchronize());
}

void cuda_use_device(int index) {
  require_cuda("cuda_use_device");
  const int count = cuda_device_count();
  if (index < 0 || index >= count)
    throw Error("cuda_use_device: GPU " + std::to_string(index) + " does not exist (" + std::to_string(count) +
                " visible)");
  int current = 0;
  ATTN_CUDA_CHECK("cuda_use_device", cudaGetDevice(&current));
  if (current != index && the_allocator().reserved() > 0)
    throw Error("cuda_use_device: GPU " + std::to_string(current) + " already holds this process's tensors (" +
                mib(the_allocator().reserved()) + "); choose the GPU before the first CUDA tensor");
  ATTN_CUDA_CHECK("cuda_use_device", cudaSetDevice(index));
}

Allocator* cuda_allocator() { return &the_allocator(); }
void cuda_empty_cache() {
  if (cuda_available()) the_allocator().empty_cache();
}
size_t cuda_cached_bytes() { return the_allocator().cached(); }
size_t cuda_reserved_bytes() { return the_allocator().reserved(); }

void cuda_copy_bytes(void* dst, const void* src, size_t bytes, Device dst_device, Device src_device) {
  if (bytes == 0) return;
  require_cuda("to_device");
  cudaMemcpyKind kind = dst_device == Device::CUDA
                            ? (src_device == Device::CUDA ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice)
                            : (src_device == Device::CUDA ? cudaMemcpyDeviceToHost : cudaMemcpyHostToHost);
  ATTN_CUDA_CHECK("to_device", cudaMemcpy(dst, src, bytes, kind));
}

}  // namespace attn
