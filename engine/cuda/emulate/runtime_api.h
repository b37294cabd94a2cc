// The CUDA runtime calls the backend makes, emulated on the host: device
// memory is host memory (16 GiB of it at most, so out-of-memory paths run),
// copies and memsets are memcpy and memset, streams are synchronous. The
// device is visible only when ATTN_CUDA_EMULATE=1 is set (the tests set it):
// otherwise cudaGetDeviceCount reports no device with a message saying this
// is an emulation harness, so `attn --device cuda` never runs on it by chance.
// It shows one device, or ATTN_CUDA_EMULATE_DEVICES of them (1 to 16), so
// data-parallel tests can give each process its own as on a multi-GPU machine.
#pragma once
#include <cstddef>

#include "attn/engine/cuda/emulate/builtins.h"

enum cudaError_t {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInvalidConfiguration = 9,
  cudaErrorInvalidDevicePointer = 17,
  cudaErrorInvalidMemcpyDirection = 21,
  cudaErrorNoDevice = 100,
  cudaErrorInvalidDevice = 101,
  cudaErrorLaunchFailure = 719,
};
typedef cudaError_t cudaError;

enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4,
};

struct CUstream_st;
typedef CUstream_st* cudaStream_t;

cudaError_t cudaGetDeviceCount(int* count);
cudaError_t cudaGetDevice(int* device);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaGetLastError();
const char* cudaGetErrorName(cudaError_t error);
const char* cudaGetErrorString(cudaError_t error);
cudaError_t cudaMalloc(void** ptr, size_t bytes);
cudaError_t cudaFree(void* ptr);
cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total_bytes);
cudaError_t cudaMemset(void* ptr, int value, size_t bytes);
cudaError_t cudaMemsetAsync(void* ptr, int value, size_t bytes, cudaStream_t stream = nullptr);
cudaError_t cudaMemcpy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind,
                            cudaStream_t stream = nullptr);
cudaError_t cudaDeviceSynchronize();
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaStreamCreate(cudaStream_t* stream);
cudaError_t cudaStreamDestroy(cudaStream_t stream);

namespace attn {
namespace emu {
// Records the error that the next cudaGetLastError returns (a bad launch).
void set_last_error(cudaError_t error);
// Whether [ptr, ptr + bytes) lies inside one live emulated device allocation.
bool is_device_range(const void* ptr, size_t bytes);
// The caching allocator's view of a block (engine/cuda/cuda_allocator.cu):
// under AddressSanitizer the bytes past `used` up to `block` are poisoned, so
// a kernel that reads or writes past its tensor is reported even inside the
// rounded block, and a cached (free) block is poisoned as a whole.
void mark_block_in_use(void* ptr, size_t used, size_t block);
void mark_block_cached(void* ptr, size_t block);
}  // namespace emu
}  // namespace attn
