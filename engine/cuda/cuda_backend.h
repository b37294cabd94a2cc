// The CUDA backend as plain C++ sees it: is there a GPU, the caching device
// allocator's knobs, host/device byte copies and the TF32 switch. Every
// function exists in every build: without the CUDA backend they report "no
// GPU" (cuda_available() is false) or throw attn::Error saying "this build has
// no CUDA backend", so callers need no #ifdef.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "attn/engine/device.h"

namespace attn {

class Allocator;

// Number of CUDA devices the runtime sees; 0 without the backend, without a
// driver or without a GPU. Never throws; asked once and remembered.
int cuda_device_count();
// True when this build has the CUDA backend and a GPU is visible.
bool cuda_available();
// Throws attn::Error "<op>: this build has no CUDA backend" or "<op>: no CUDA
// GPU is visible ..." unless cuda_available().
void require_cuda(const char* op);
// A --device value: "cpu", or "cuda" once require_cuda(op) has passed (so a
// machine without the backend or a GPU fails here, before any work).
// Anything else throws attn::Error.
Device parse_device(const std::string& name, const char* op);
// Makes GPU `index` (0 .. cuda_device_count() - 1) the one this process's
// allocations, copies and kernels use: a data-parallel run on one machine
// gives each process its own GPU (train/distributed/process_gpu.h). Call it
// before the first CUDA tensor exists; once the allocator holds blocks of one
// GPU, moving to another throws attn::Error (those blocks would be handed to
// kernels on the wrong device). Throws without the backend or a GPU.
void cuda_use_device(int index);
// Waits for every queued kernel (a no-op without a GPU); timings call it.
void cuda_synchronize();

// --- The caching device allocator -----------------------------------------
// Requests are rounded up: to a multiple of 512 bytes up to 1 MiB, to a
// multiple of 2 MiB above, so blocks freed by one step fit the next step's
// requests. Freed blocks go to free lists by size and are reused; cudaMalloc
// runs only when no cached block fits. When cudaMalloc reports out of memory
// the cache is emptied and the request retried once, then attn::Error names
// the requested bytes.
constexpr size_t kCudaSmallRound = 512;
constexpr size_t kCudaSmallLimit = size_t(1) << 20;
constexpr size_t kCudaLargeRound = size_t(2) << 20;
// The block size a request of `bytes` gets (pure arithmetic; 0 gets 512).
size_t cuda_round_allocation(size_t bytes);
// Whether a cached block of `block` bytes may serve a request rounded to
// `rounded` bytes: small blocks must match exactly; a large block may be up to
// a quarter larger, so a big block is not tied up by a small request.
bool cuda_block_fits(size_t block, size_t rounded);

// The CUDA allocator (installed by allocator_for(Device::CUDA)); null
// without the backend.
Allocator* cuda_allocator();
// Returns every cached (free) block to the driver.
void cuda_empty_cache();
// Bytes held in free lists, and bytes obtained from cudaMalloc in all.
size_t cuda_cached_bytes();
size_t cuda_reserved_bytes();

// Test hook: while on, every CUDA allocation is filled with 0xFF bytes (NaN
// as float32 and float64, -1 as int64, 255 as uint8), so an output element
// a kernel forgot to write fails a comparison instead of passing by luck.
void set_cuda_sentinel_fill(bool on);
bool cuda_sentinel_fill();
class CudaSentinelScope {
 public:
  explicit CudaSentinelScope(bool on = true) : previous_(cuda_sentinel_fill()) { set_cuda_sentinel_fill(on); }
  ~CudaSentinelScope() { set_cuda_sentinel_fill(previous_); }
  CudaSentinelScope(const CudaSentinelScope&) = delete;
  CudaSentinelScope& operator=(const CudaSentinelScope&) = delete;

 private:
  bool previous_;
};

// Copies `bytes` between host and device memory (either direction, or device
// to device); returns when the destination may be read by the host.
void cuda_copy_bytes(void* dst, const void* src, size_t bytes, Device dst_device, Device src_device);

// --- Numerics ---------------------------------------------------------------
// TF32 tensor-core math for float32 GEMMs. Off by default so CUDA results
// match the CPU to float32 rounding; ATTN_TF32=1 in the environment turns it
// on at start, set_cuda_tf32 at any time.
void set_cuda_tf32(bool on);
bool cuda_tf32();

}  // namespace attn
