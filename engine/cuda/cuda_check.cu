// The error side of engine/cuda/cuda_check.h: a failed CUDA or cuBLAS call becomes
// an attn::Error naming the op, the call, CUDA's own message and the place.
#include <cstring>
#include <string>

#include "attn/engine/cuda/cuda_check.h"
#include "attn/engine/error.h"

namespace attn {

namespace {
std::string where(const char* file, int line) {
  const char* base = std::strrchr(file, '/');
  return std::string(base ? base + 1 : file) + ":" + std::to_string(line);
}
}  // namespace

void throw_cuda_error(const char* op, const char* call, cudaError_t status, const char* file, int line) {
  // Clear a non-sticky error so that the next call does not report it again.
  cudaGetLastError();
  throw Error(std::string(op) + ": CUDA error " + cudaGetErrorName(status) + " (" + cudaGetErrorString(status) +
              ") in " + call + " (" + where(file, line) + ")");
}

void throw_cublas_error(const char* op, const char* call, cublasStatus_t status, const char* file, int line) {
  throw Error(std::string(op) + ": cuBLAS error " + cublasGetStatusName(status) + " (" +
              cublasGetStatusString(status) + ") in " + call + " (" + where(file, line) + ")");
}

}  // namespace attn
