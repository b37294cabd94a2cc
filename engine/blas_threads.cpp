#include "attn/engine/blas_threads.h"

#include <cblas.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

#include "attn/engine/parallel.h"

namespace attn {

namespace {

std::once_flag serial_once;

// One m x n x k product in T on the calling thread's OpenBLAS work buffer.
template <class T>
void warm_gemm(int m, int n, int k) {
  std::vector<T> a(static_cast<size_t>(m) * k, T(1)), b(static_cast<size_t>(k) * n, T(1)),
      c(static_cast<size_t>(m) * n);
  if constexpr (std::is_same_v<T, float>) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a.data(), k, b.data(), n, 0.0f, c.data(), n);
  } else {
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0, a.data(), k, b.data(), n, 0.0, c.data(), n);
  }
}

// OpenBLAS 0.3.21's AVX2 GEMM kernels (the Haswell ones, which it also runs
// on Zen) prefetch ahead of their packed panels inside the work buffer.
// Where that runs onto pages of the buffer no product has written yet, the
// prefetches stall the kernel: a 256^3 float32 product ran at 10 GFLOP/s
// per core instead of 35 on a KVM guest with a Zen CPU, and kept doing so
// until a product with 512 or more columns had run on that buffer (docs/
// engine.md, "OpenBLAS's cold buffers"). So before the first product each
// engine thread runs one such product in each precision, all threads at
// once (serial calls from concurrent threads take different buffers), and
// one more goes through OpenBLAS's own threads: a few milliseconds, once
// per process.
void warm_blas_buffers() {
  openblas_set_num_threads(1);
  const int64_t threads = parallel_threads();
  std::atomic<int64_t> arrived{0};
  parallel_for(threads, 1, [&](int64_t begin, int64_t end) {
    // Serial calls take a free buffer from OpenBLAS's pool: the threads
    // start together, so that each takes its own instead of reusing the one
    // a faster thread has just given back. (Bounded: a smaller team than
    // asked for must not wait forever.)
    arrived.fetch_add(1);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
    while (arrived.load() < threads && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
    for (int64_t i = begin; i < end; ++i) {
      warm_gemm<float>(256, 512, 64);
      warm_gemm<double>(256, 512, 64);
    }
  });
  if (threads > 1) {
    const int t = static_cast<int>(threads);
    openblas_set_num_threads(t);
    warm_gemm<float>(t * 256, t * 512, 64);
    warm_gemm<double>(t * 256, t * 512, 64);
    openblas_set_num_threads(1);
  }
}

}  // namespace

void use_serial_blas() { std::call_once(serial_once, warm_blas_buffers); }

ScopedBlasThreads::ScopedBlasThreads(int threads) {
  use_serial_blas();  // so that the destructor's setting is not undone later
  openblas_set_num_threads(threads);
}

ScopedBlasThreads::~ScopedBlasThreads() { openblas_set_num_threads(1); }

}  // namespace attn
