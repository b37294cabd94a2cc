// Splits [0, n) across OpenMP threads when the work is large enough to pay
// for the fork; small work runs inline on the calling thread.
#pragma once
#include <algorithm>
#include <cstdint>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace attn {

// Below this many elements an elementwise or reduction kernel stays serial.
constexpr int64_t kParallelGrain = 1 << 15;

// The grain, in rows, of a parallel_for over rows of `row_length` elements:
// about kParallelGrain elements per chunk, at least one row.
inline int64_t row_grain(int64_t row_length) {
  return std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(row_length, 1));
}

// How many threads a parallel_for started here would use.
inline int64_t parallel_threads() {
#ifdef _OPENMP
  return omp_in_parallel() ? 1 : omp_get_max_threads();
#else
  return 1;
#endif
}

// At most this many chunks per thread in a parallel_for: enough that a
// thread on a slower core (a virtual machine's vCPUs can differ by half,
// and which one is slow changes) ends up with fewer of them, few enough
// that each still amortises its own set-up.
constexpr int64_t kChunksPerThread = 4;

// Calls f(begin, end) on disjoint chunks covering [0, n), each at least
// `grain` long where n allows. Threads take the next chunk as they come
// free. The chunks' bounds depend only on n, grain and the thread count, so
// a kernel whose chunks write disjoint outputs gets the same bits on every
// run.
template <class F>
void parallel_for(int64_t n, int64_t grain, const F& f) {
  if (n <= 0) return;
#ifdef _OPENMP
  const int64_t threads = omp_get_max_threads();
  if (n > grain && threads > 1 && !omp_in_parallel()) {
    const int64_t by_grain = n / std::max<int64_t>(grain, 1);
    const int64_t chunks = std::min(n, std::clamp(by_grain, threads, threads * kChunksPerThread));
#pragma omp parallel
    {
#pragma omp for schedule(dynamic, 1)
      for (int64_t c = 0; c < chunks; ++c) {
        const int64_t begin = c * n / chunks, end = (c + 1) * n / chunks;
        if (begin < end) f(begin, end);
      }
    }
    return;
  }
#endif
  (void)grain;
  f(0, n);
}

}  // namespace attn
