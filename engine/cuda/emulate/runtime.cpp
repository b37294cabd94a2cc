// The emulated CUDA runtime: device memory is host memory, tracked so that
// copies and cuBLAS calls can check that a "device" pointer really is one;
// copies, memsets and synchronisation are their host equivalents (every
// launch has finished when it returns).
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "attn/engine/cuda/emulate/runtime_api.h"

#include "attn/engine/asan.h"

namespace attn {
namespace emu {

namespace {

// The emulated device's memory; beyond it cudaMalloc reports out of memory.
constexpr size_t kDeviceBytes = size_t(16) << 30;
constexpr size_t kAlignment = 256;  // cudaMalloc's guarantee

std::mutex g_mutex;
std::map<const char*, size_t> g_allocations;  // base -> bytes
size_t g_allocated = 0;
cudaError_t g_last_error = cudaSuccess;

bool device_visible() {
  static const bool visible = [] {
    const char* v = std::getenv("ATTN_CUDA_EMULATE");
    return v && std::strcmp(v, "1") == 0;
  }();
  return visible;
}

// How many devices the emulation shows: ATTN_CUDA_EMULATE_DEVICES (1 to
// kMaxDevices), else 1. Several are for the data-parallel tests, where each
// process takes its own device as on a machine with a GPU per process; they
// are one host memory, each process its own. A value outside the range
// shows no device, and cudaGetErrorString says why.
constexpr int kMaxDevices = 16;
int device_count_set() {
  static const int count = [] {
    const char* v = std::getenv("ATTN_CUDA_EMULATE_DEVICES");
    if (!v || !*v) return 1;
    char* end = nullptr;
    const long n = std::strtol(v, &end, 10);
    return *end == '\0' && n >= 1 && n <= kMaxDevices ? static_cast<int>(n) : 0;
  }();
  return count;
}
std::atomic<int> g_current_device{0};

bool is_device_range_locked(const void* ptr, size_t bytes) {
  const char* p = static_cast<const char*>(ptr);
  auto it = g_allocations.upper_bound(p);
  if (it == g_allocations.begin()) return false;
  --it;
  return p >= it->first && bytes <= it->second && static_cast<size_t>(p - it->first) <= it->second - bytes;
}

cudaError_t fail(cudaError_t e) {
  g_last_error = e;
  return e;
}

// Both sides of a copy must be where `kind` says.
bool copy_sides_ok(const void* dst, const void* src, size_t bytes, cudaMemcpyKind kind) {
  std::lock_guard<std::mutex> lock(g_mutex);
  const bool dst_dev = is_device_range_locked(dst, bytes), src_dev = is_device_range_locked(src, bytes);
  switch (kind) {
    case cudaMemcpyHostToHost: return !dst_dev && !src_dev;
    case cudaMemcpyHostToDevice: return dst_dev && !src_dev;
    case cudaMemcpyDeviceToHost: return !dst_dev && src_dev;
    case cudaMemcpyDeviceToDevice: return dst_dev && src_dev;
    case cudaMemcpyDefault: return true;
  }
  return false;
}

}  // namespace

void set_last_error(cudaError_t error) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_last_error = error;
}

bool is_device_range(const void* ptr, size_t bytes) {
  std::lock_guard<std::mutex> lock(g_mutex);
  return is_device_range_locked(ptr, bytes);
}

void mark_block_in_use(void* ptr, size_t used, size_t block) {
  char* p = static_cast<char*>(ptr);
  asan::unpoison(p, used);
  asan::poison(p + used, block - used);
}

void mark_block_cached(void* ptr, size_t block) { asan::poison(ptr, block); }

}  // namespace emu
}  // namespace attn

using attn::emu::fail;

cudaError_t cudaGetDeviceCount(int* count) {
  *count = attn::emu::device_visible() ? attn::emu::device_count_set() : 0;
  return *count ? cudaSuccess : fail(cudaErrorNoDevice);
}

cudaError_t cudaGetDevice(int* device) {
  *device = attn::emu::g_current_device;
  return attn::emu::device_visible() ? cudaSuccess : fail(cudaErrorNoDevice);
}

cudaError_t cudaSetDevice(int device) {
  if (!attn::emu::device_visible() || attn::emu::device_count_set() == 0) return fail(cudaErrorNoDevice);
  if (device < 0 || device >= attn::emu::device_count_set()) return fail(cudaErrorInvalidDevice);
  attn::emu::g_current_device = device;
  return cudaSuccess;
}

cudaError_t cudaGetLastError() {
  std::lock_guard<std::mutex> lock(attn::emu::g_mutex);
  const cudaError_t e = attn::emu::g_last_error;
  attn::emu::g_last_error = cudaSuccess;
  return e;
}

const char* cudaGetErrorName(cudaError_t error) {
  switch (error) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorInvalidConfiguration: return "cudaErrorInvalidConfiguration";
    case cudaErrorInvalidDevicePointer: return "cudaErrorInvalidDevicePointer";
    case cudaErrorInvalidMemcpyDirection: return "cudaErrorInvalidMemcpyDirection";
    case cudaErrorNoDevice: return "cudaErrorNoDevice";
    case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
    case cudaErrorLaunchFailure: return "cudaErrorLaunchFailure";
  }
  return "cudaErrorUnknown";
}

const char* cudaGetErrorString(cudaError_t error) {
  switch (error) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory (the emulated device has 16 GiB)";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorInvalidDevicePointer: return "invalid device pointer";
    case cudaErrorInvalidMemcpyDirection:
      return "a side of the copy is not where the cudaMemcpyKind says (host vs device pointer)";
    case cudaErrorNoDevice:
      if (attn::emu::device_visible() && attn::emu::device_count_set() == 0)
        return "ATTN_CUDA_EMULATE_DEVICES must be a whole number from 1 to 16 (the emulated devices)";
      return "this is the emulated CUDA build (ATTN_CUDA=EMULATE), a test harness that runs the kernels on the "
             "CPU, not a GPU backend; its device is visible only to tests, which set ATTN_CUDA_EMULATE=1";
    case cudaErrorInvalidDevice:
      return "invalid device ordinal (the emulation has ATTN_CUDA_EMULATE_DEVICES devices, 1 unless set)";
    case cudaErrorLaunchFailure: return "unspecified launch failure";
  }
  return "unknown error";
}

cudaError_t cudaMalloc(void** ptr, size_t bytes) {
  *ptr = nullptr;
  if (!attn::emu::device_visible()) return fail(cudaErrorNoDevice);
  const size_t rounded = (bytes + attn::emu::kAlignment - 1) / attn::emu::kAlignment * attn::emu::kAlignment;
  std::lock_guard<std::mutex> lock(attn::emu::g_mutex);
  if (bytes > attn::emu::kDeviceBytes || rounded > attn::emu::kDeviceBytes - attn::emu::g_allocated)
    return fail(cudaErrorMemoryAllocation);
  void* p = std::aligned_alloc(attn::emu::kAlignment, rounded == 0 ? attn::emu::kAlignment : rounded);
  if (!p) return fail(cudaErrorMemoryAllocation);
  attn::emu::g_allocations[static_cast<const char*>(p)] = bytes;
  attn::emu::g_allocated += rounded;
  *ptr = p;
  return cudaSuccess;
}

cudaError_t cudaFree(void* ptr) {
  if (!ptr) return cudaSuccess;
  std::lock_guard<std::mutex> lock(attn::emu::g_mutex);
  auto it = attn::emu::g_allocations.find(static_cast<const char*>(ptr));
  if (it == attn::emu::g_allocations.end()) return fail(cudaErrorInvalidDevicePointer);
  attn::asan::unpoison(ptr, it->second);
  attn::emu::g_allocated -=
      (it->second + attn::emu::kAlignment - 1) / attn::emu::kAlignment * attn::emu::kAlignment;
  attn::emu::g_allocations.erase(it);
  std::free(ptr);
  return cudaSuccess;
}

cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total_bytes) {
  std::lock_guard<std::mutex> lock(attn::emu::g_mutex);
  *total_bytes = attn::emu::kDeviceBytes;
  *free_bytes = attn::emu::kDeviceBytes - attn::emu::g_allocated;
  return cudaSuccess;
}

cudaError_t cudaMemset(void* ptr, int value, size_t bytes) {
  if (bytes == 0) return cudaSuccess;
  if (!attn::emu::is_device_range(ptr, bytes)) return fail(cudaErrorInvalidValue);
  std::memset(ptr, value, bytes);
  return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void* ptr, int value, size_t bytes, cudaStream_t) { return cudaMemset(ptr, value, bytes); }

cudaError_t cudaMemcpy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind) {
  if (bytes == 0) return cudaSuccess;
  if (!attn::emu::copy_sides_ok(dst, src, bytes, kind)) return fail(cudaErrorInvalidMemcpyDirection);
  std::memmove(dst, src, bytes);
  return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, cudaStream_t) {
  return cudaMemcpy(dst, src, bytes, kind);
}

cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }
cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }

// Streams are synchronous here, so a stream is only a handle: a distinct
// non-null one, as callers may compare it with the null stream.
struct CUstream_st {};

cudaError_t cudaStreamCreate(cudaStream_t* stream) {
  if (!attn::emu::device_visible()) return fail(cudaErrorNoDevice);
  *stream = new CUstream_st;
  return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  delete stream;
  return cudaSuccess;
}
