// Checking every CUDA runtime call, cuBLAS call and kernel launch: a failure
// becomes an attn::Error naming the op, the call and CUDA's own message.
// Included only by CUDA sources (.cu) of a build with ATTN_WITH_CUDA.
#pragma once
#include <cublas_v2.h>
#include <cuda_runtime.h>

namespace attn {

[[noreturn]] void throw_cuda_error(const char* op, const char* call, cudaError_t status, const char* file, int line);
[[noreturn]] void throw_cublas_error(const char* op, const char* call, cublasStatus_t status, const char* file,
                                     int line);

}  // namespace attn

// ATTN_CUDA_CHECK("softmax", cudaMemsetAsync(...));
#define ATTN_CUDA_CHECK(op, call)                                                   \
  do {                                                                              \
    cudaError_t attn_cuda_status_ = (call);                                         \
    if (attn_cuda_status_ != cudaSuccess)                                           \
      ::attn::throw_cuda_error((op), #call, attn_cuda_status_, __FILE__, __LINE__); \
  } while (0)

// ATTN_CUBLAS_CHECK("matmul", cublasSgemm(...));
#define ATTN_CUBLAS_CHECK(op, call)                                                   \
  do {                                                                                \
    cublasStatus_t attn_cublas_status_ = (call);                                      \
    if (attn_cublas_status_ != CUBLAS_STATUS_SUCCESS)                                 \
      ::attn::throw_cublas_error((op), #call, attn_cublas_status_, __FILE__, __LINE__); \
  } while (0)

// Right after a <<<...>>> launch: reports a bad configuration at once
// (errors inside the kernel surface at the next synchronising call).
#define ATTN_CUDA_CHECK_LAUNCH(op) ATTN_CUDA_CHECK((op), cudaGetLastError())
