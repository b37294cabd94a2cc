// The emulated cuBLAS GEMMs: cuBLAS's argument checks, then OpenBLAS in
// column-major order with the very flags and leading dimensions the caller
// gave, after checking that every matrix the call touches is device memory
// (and, under AddressSanitizer, not poisoned: past a tensor's end inside its
// cached block, or freed).
#include <cblas.h>

#include <algorithm>
#include <mutex>
#include <set>
#include <string>

#include "attn/engine/cuda/emulate/cublas_api.h"
#include "attn/engine/error.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

struct cublasContext {
  cublasMath_t math = CUBLAS_DEFAULT_MATH;
};

namespace {

bool valid_op(cublasOperation_t op) { return op == CUBLAS_OP_N || op == CUBLAS_OP_T; }
CBLAS_TRANSPOSE cblas_op(cublasOperation_t op) { return op == CUBLAS_OP_N ? CblasNoTrans : CblasTrans; }

// cuBLAS's rules for gemm: no negative size, each leading dimension at least
// the stored matrix's row count (column-major), op C (conjugate) unsupported
// here as it is meaningless for real types anyway.
bool valid_gemm(cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, int lda, int ldb, int ldc) {
  if (!valid_op(ta) || !valid_op(tb) || m < 0 || n < 0 || k < 0) return false;
  const int a_rows = ta == CUBLAS_OP_N ? m : k, b_rows = tb == CUBLAS_OP_N ? k : n;
  return lda >= std::max(1, a_rows) && ldb >= std::max(1, b_rows) && ldc >= std::max(1, m);
}

// Bytes spanned by a column-major rows x cols matrix with leading dimension ld.
size_t span(int rows, int cols, int ld, size_t elem) {
  if (rows == 0 || cols == 0) return 0;
  return (static_cast<size_t>(cols - 1) * static_cast<size_t>(ld) + static_cast<size_t>(rows)) * elem;
}

void check_matrix(const char* call, const char* name, const void* p, size_t bytes) {
  if (bytes == 0) return;
  if (!attn::emu::is_device_range(p, bytes))
    throw attn::Error(std::string("emulated cuBLAS: ") + call + " would access " + std::to_string(bytes) +
                      " bytes of " + name + " outside any device allocation (an illegal address on a GPU)");
#if defined(__SANITIZE_ADDRESS__)
  if (const void* bad = __asan_region_is_poisoned(const_cast<void*>(p), bytes))
    throw attn::Error(std::string("emulated cuBLAS: ") + call + " would access " + name + " at byte " +
                      std::to_string(static_cast<const char*>(bad) - static_cast<const char*>(p)) + " of " +
                      std::to_string(bytes) + ", past its tensor or in a freed block");
#endif
}

template <class T>
void check_operands(const char* call, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const T* A,
                    int lda, const T* B, int ldb, const T* C, int ldc) {
  check_matrix(call, "A", A, ta == CUBLAS_OP_N ? span(m, k, lda, sizeof(T)) : span(k, m, lda, sizeof(T)));
  check_matrix(call, "B", B, tb == CUBLAS_OP_N ? span(k, n, ldb, sizeof(T)) : span(n, k, ldb, sizeof(T)));
  check_matrix(call, "C", C, span(m, n, ldc, sizeof(T)));
}

void gemm(cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, float alpha, const float* A, int lda,
          const float* B, int ldb, float beta, float* C, int ldc) {
  if (m == 0 || n == 0) return;
  cblas_sgemm(CblasColMajor, cblas_op(ta), cblas_op(tb), m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
void gemm(cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, double alpha, const double* A, int lda,
          const double* B, int ldb, double beta, double* C, int ldc) {
  if (m == 0 || n == 0) return;
  cblas_dgemm(CblasColMajor, cblas_op(ta), cblas_op(tb), m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

template <class T>
cublasStatus_t one(const char* call, cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                   int k, const T* alpha, const T* A, int lda, const T* B, int ldb, const T* beta, T* C, int ldc) {
  if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!valid_gemm(ta, tb, m, n, k, lda, ldb, ldc)) return CUBLAS_STATUS_INVALID_VALUE;
  check_operands(call, ta, tb, m, n, k, A, lda, B, ldb, C, ldc);
  gemm(ta, tb, m, n, k, *alpha, A, lda, B, ldb, *beta, C, ldc);
  return CUBLAS_STATUS_SUCCESS;
}

template <class T>
cublasStatus_t strided(const char* call, cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                       int k, const T* alpha, const T* A, int lda, long long sa, const T* B, int ldb, long long sb,
                       const T* beta, T* C, int ldc, long long sc, int batch) {
  if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!valid_gemm(ta, tb, m, n, k, lda, ldb, ldc) || batch < 0) return CUBLAS_STATUS_INVALID_VALUE;
  for (int i = 0; i < batch; ++i) {
    check_operands(call, ta, tb, m, n, k, A + i * sa, lda, B + i * sb, ldb, C + i * sc, ldc);
    gemm(ta, tb, m, n, k, *alpha, A + i * sa, lda, B + i * sb, ldb, *beta, C + i * sc, ldc);
  }
  return CUBLAS_STATUS_SUCCESS;
}

template <class T>
cublasStatus_t batched(const char* call, cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                       int k, const T* alpha, const T* const A[], int lda, const T* const B[], int ldb,
                       const T* beta, T* const C[], int ldc, int batch) {
  if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!valid_gemm(ta, tb, m, n, k, lda, ldb, ldc) || batch < 0) return CUBLAS_STATUS_INVALID_VALUE;
  // The pointer arrays themselves live in device memory.
  const size_t array_bytes = static_cast<size_t>(batch) * sizeof(T*);
  check_matrix(call, "the A pointer array", A, array_bytes);
  check_matrix(call, "the B pointer array", B, array_bytes);
  check_matrix(call, "the C pointer array", C, array_bytes);
  for (int i = 0; i < batch; ++i) {
    check_operands(call, ta, tb, m, n, k, A[i], lda, B[i], ldb, C[i], ldc);
    gemm(ta, tb, m, n, k, *alpha, A[i], lda, B[i], ldb, *beta, C[i], ldc);
  }
  return CUBLAS_STATUS_SUCCESS;
}

}  // namespace

namespace {
// Every live handle. The backend never destroys its per-thread handles (the
// CUDA runtime may be gone at exit); held here, they are not reported as leaks.
std::mutex g_handles_mutex;
std::set<cublasHandle_t>& handles() {
  static std::set<cublasHandle_t>* h = new std::set<cublasHandle_t>();
  return *h;
}
}  // namespace

cublasStatus_t cublasCreate(cublasHandle_t* handle) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    cudaGetLastError();
    return CUBLAS_STATUS_NOT_INITIALIZED;
  }
  std::lock_guard<std::mutex> lock(g_handles_mutex);
  *handle = new cublasContext();
  handles().insert(*handle);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy(cublasHandle_t handle) {
  std::lock_guard<std::mutex> lock(g_handles_mutex);
  if (handles().erase(handle) == 0) return CUBLAS_STATUS_NOT_INITIALIZED;
  delete handle;
  return CUBLAS_STATUS_SUCCESS;
}

// TF32 is accepted and ignored: the emulation computes in full float32.
cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode) {
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  handle->math = mode;
  return CUBLAS_STATUS_SUCCESS;
}

const char* cublasGetStatusName(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
  }
  return "CUBLAS_STATUS_UNKNOWN";
}

const char* cublasGetStatusString(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS: return "success";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "the library was not initialized";
    case CUBLAS_STATUS_ALLOC_FAILED: return "the resource allocation failed";
    case CUBLAS_STATUS_INVALID_VALUE: return "an invalid numeric value was used as an argument";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "the GPU program failed to execute";
  }
  return "unknown status";
}

cublasStatus_t cublasSgemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                           const float* alpha, const float* A, int lda, const float* B, int ldb, const float* beta,
                           float* C, int ldc) {
  return one("cublasSgemm", h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
cublasStatus_t cublasDgemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                           const double* alpha, const double* A, int lda, const double* B, int ldb,
                           const double* beta, double* C, int ldc) {
  return one("cublasDgemm", h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                         int k, const float* alpha, const float* A, int lda, long long sa,
                                         const float* B, int ldb, long long sb, const float* beta, float* C, int ldc,
                                         long long sc, int batch) {
  return strided("cublasSgemmStridedBatched", h, ta, tb, m, n, k, alpha, A, lda, sa, B, ldb, sb, beta, C, ldc, sc,
                 batch);
}
cublasStatus_t cublasDgemmStridedBatched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                         int k, const double* alpha, const double* A, int lda, long long sa,
                                         const double* B, int ldb, long long sb, const double* beta, double* C,
                                         int ldc, long long sc, int batch) {
  return strided("cublasDgemmStridedBatched", h, ta, tb, m, n, k, alpha, A, lda, sa, B, ldb, sb, beta, C, ldc, sc,
                 batch);
}
cublasStatus_t cublasSgemmBatched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                                  const float* alpha, const float* const A[], int lda, const float* const B[],
                                  int ldb, const float* beta, float* const C[], int ldc, int batch) {
  return batched("cublasSgemmBatched", h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, batch);
}
cublasStatus_t cublasDgemmBatched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                                  const double* alpha, const double* const A[], int lda, const double* const B[],
                                  int ldb, const double* beta, double* const C[], int ldc, int batch) {
  return batched("cublasDgemmBatched", h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, batch);
}
