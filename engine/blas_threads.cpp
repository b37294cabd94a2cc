#include "attn/engine/blas_threads.h"

#include <cblas.h>

#include <algorithm>
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

// When each of a team's threads was inside its warming product: steady
// clock nanoseconds, per thread and precision.
struct Interval {
  int64_t start = 0, end = 0;
};

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Whether all of `calls` were in flight together for at least `margin_ns`.
bool all_overlap(const std::vector<Interval>& calls, int64_t margin_ns) {
  int64_t latest_start = calls.front().start, earliest_end = calls.front().end;
  for (const Interval& c : calls) {
    latest_start = std::max(latest_start, c.start);
    earliest_end = std::min(earliest_end, c.end);
  }
  return earliest_end - latest_start >= margin_ns;
}

// OpenBLAS 0.3.21's AVX2 GEMM kernels (the Haswell ones, which it also runs
// on Zen) prefetch ahead of their packed panels inside the work buffer.
// Where that runs onto pages of the buffer no product has written yet, the
// prefetches stall the kernel: a 256^3 float32 product ran at 10 GFLOP/s
// per core instead of 35 on a KVM guest with a Zen CPU, and kept doing so
// until a product with 512 or more columns had run on that buffer (docs/
// engine.md, "OpenBLAS's cold buffers"). So before the first product each
// engine thread runs one such product in each precision, and one more goes
// through OpenBLAS's own threads: a few milliseconds, once per process.
//
// A serial call takes the first free buffer of OpenBLAS's pool and gives it
// back when it returns, so the engine's threads warm one buffer each only if
// their products are in flight at the same time. Starting them together is
// not enough: a thread that starts half a millisecond late (descheduled, on
// two busy cores) finds the first buffer free again, and the buffer the
// threads take together later stays cold for the whole process (MTSA's
// training step ran at twice its time in 1 to 2 processes out of 10). So
// rounds repeat until every thread's product overlapped all the others' by
// kOverlapNs, far more than a call takes to take or give back its buffer;
// bounded, so that a team smaller than asked for cannot hold a process up.
constexpr int64_t kOverlapNs = 100'000;
constexpr auto kWarmDeadline = std::chrono::milliseconds(300);

void warm_blas_buffers() {
  openblas_set_num_threads(1);
  const int64_t threads = parallel_threads();
  std::vector<Interval> floats(static_cast<size_t>(threads)), doubles(static_cast<size_t>(threads));
  const auto deadline = std::chrono::steady_clock::now() + kWarmDeadline;
  bool overlapped = false;
  while (!overlapped) {
    std::atomic<int64_t> arrived{0};
    parallel_for(threads, 1, [&](int64_t begin, int64_t end) {
      arrived.fetch_add(1);
      while (arrived.load() < threads && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
      for (int64_t i = begin; i < end; ++i) {
        floats[i].start = now_ns();
        warm_gemm<float>(256, 512, 64);
        floats[i].end = now_ns();
        doubles[i].start = now_ns();
        warm_gemm<double>(256, 512, 64);
        doubles[i].end = now_ns();
      }
    });
    overlapped = threads <= 1 || (all_overlap(floats, kOverlapNs) && all_overlap(doubles, kOverlapNs));
    if (std::chrono::steady_clock::now() >= deadline) break;
  }
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
