#include "attn/engine/blas_threads.h"

#include <cblas.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "attn/engine/parallel.h"

namespace attn {

namespace {

std::once_flag serial_once;

// One product of each precision, m x n x k, on the calling thread's OpenBLAS
// work buffer.
void warm_product(int m, int n, int k) {
  std::vector<float> af(static_cast<size_t>(m) * k, 1.0f), bf(static_cast<size_t>(k) * n, 1.0f),
      cf(static_cast<size_t>(m) * n);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, af.data(), k, bf.data(), n, 0.0f, cf.data(), n);
  std::vector<double> ad(af.begin(), af.end()), bd(bf.begin(), bf.end()), cd(cf.size());
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0, ad.data(), k, bd.data(), n, 0.0, cd.data(), n);
}

// OpenBLAS 0.3.21's AVX2 GEMM kernels (the Haswell ones, which it also runs
// on Zen) prefetch ahead of their packed panels inside the work buffer. On
// a fresh buffer those prefetches stalled every product whose n is below
// about 512 at a third of its speed (a 256^3 product at 10 GFLOP/s per core
// instead of 35 on a KVM guest with a Zen CPU), and they kept doing so until
// a product with n >= 512 had run on that buffer (docs/engine.md, "OpenBLAS's
// cold buffers"). So before the first product one such product runs on every
// buffer the engine's GEMMs can use: one per engine thread at once (serial
// calls from concurrent threads take different buffers) and one through
// OpenBLAS's own threads. About 2 ms per thread, once per process.
void warm_blas_buffers() {
  constexpr int kWarmRows = 256, kWarmCols = 512, kWarmDepth = 64;
  openblas_set_num_threads(1);
  const int64_t threads = parallel_threads();
  std::atomic<int64_t> arrived{0};
  parallel_for(threads, 1, [&](int64_t begin, int64_t end) {
    // Serial calls take the first free buffer of OpenBLAS's pool: the threads
    // start together, so that each takes its own instead of reusing the one
    // a faster thread has just given back. (Bounded: a smaller team than
    // asked for must not wait forever.)
    arrived.fetch_add(1);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
    while (arrived.load() < threads && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
    for (int64_t i = begin; i < end; ++i) warm_product(kWarmRows, kWarmCols, kWarmDepth);
  });
  if (threads > 1) {
    openblas_set_num_threads(static_cast<int>(threads));
    warm_product(static_cast<int>(threads) * kWarmRows, static_cast<int>(threads) * kWarmCols, kWarmDepth);
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
