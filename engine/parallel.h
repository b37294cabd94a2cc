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

// Calls f(begin, end) on disjoint chunks covering [0, n).
template <class F>
void parallel_for(int64_t n, int64_t grain, const F& f) {
  if (n <= 0) return;
#ifdef _OPENMP
  if (n > grain && omp_get_max_threads() > 1 && !omp_in_parallel()) {
#pragma omp parallel
    {
      int64_t threads = omp_get_num_threads();
      int64_t id = omp_get_thread_num();
      int64_t chunk = (n + threads - 1) / threads;
      int64_t begin = std::min(n, id * chunk);
      int64_t end = std::min(n, begin + chunk);
      if (begin < end) f(begin, end);
    }
    return;
  }
#endif
  (void)grain;
  f(0, n);
}

}  // namespace attn
