// The parts of the CUDA backend's interface that need no CUDA compiler: the
// allocator's rounding rule, the test and numerics switches, and (in a build
// without the backend) the answers "no GPU" / "this build has no CUDA backend".
// The CUDA build implements the rest in engine/cuda/cuda_allocator.cu.
#include "attn/engine/cuda/cuda_backend.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "attn/engine/error.h"

namespace attn {

size_t cuda_round_allocation(size_t bytes) {
  if (bytes == 0) return kCudaSmallRound;
  if (bytes <= kCudaSmallLimit) return (bytes + kCudaSmallRound - 1) / kCudaSmallRound * kCudaSmallRound;
  return (bytes + kCudaLargeRound - 1) / kCudaLargeRound * kCudaLargeRound;
}

bool cuda_block_fits(size_t block, size_t rounded) {
  if (block < rounded) return false;
  if (rounded <= kCudaSmallLimit) return block == rounded;
  return block - rounded <= rounded / 4;
}

namespace {
std::atomic<bool> g_sentinel{false};

bool tf32_from_environment() {
  const char* v = std::getenv("ATTN_TF32");
  return v && std::strcmp(v, "1") == 0;
}
std::atomic<bool> g_tf32{tf32_from_environment()};
}  // namespace

void set_cuda_sentinel_fill(bool on) { g_sentinel.store(on); }
bool cuda_sentinel_fill() { return g_sentinel.load(); }
void set_cuda_tf32(bool on) { g_tf32.store(on); }
bool cuda_tf32() { return g_tf32.load(); }

bool cuda_available() { return cuda_device_count() > 0; }

Device parse_device(const std::string& name, const char* op) {
  if (name == "cpu") return Device::CPU;
  if (name == "cuda") {
    require_cuda((std::string(op) + " --device cuda").c_str());
    return Device::CUDA;
  }
  throw Error(std::string(op) + ": unknown --device '" + name + "' (cpu or cuda)");
}

#ifndef ATTN_WITH_CUDA

int cuda_device_count() { return 0; }

void require_cuda(const char* op) {
  throw Error(std::string(op) + ": this build has no CUDA backend (rebuild with nvcc installed and -DATTN_CUDA=ON)");
}

void cuda_synchronize() {}
void cuda_use_device(int) { require_cuda("cuda_use_device"); }
Allocator* cuda_allocator() { return nullptr; }
void cuda_empty_cache() {}
size_t cuda_cached_bytes() { return 0; }
size_t cuda_reserved_bytes() { return 0; }

void cuda_copy_bytes(void*, const void*, size_t, Device, Device) { require_cuda("copy to or from cuda"); }

#endif

}  // namespace attn
