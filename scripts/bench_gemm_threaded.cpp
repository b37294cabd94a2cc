// Standalone: the engine's single float32 GEMM on 2 threads, the old fixed
// split (each thread one half of C's rows, packing all of B for itself)
// against sgemm_avx512_threaded (B packed once between the threads, blocks of
// 96 rows handed out as threads come free), alternated in one process on the
// models' shapes; first, each thread's own time for its half under the fixed
// split (how uneven the cores are right now). The figures in
// docs/benchmarks.md ("Twenty-second pass") come from it. Needs the CPU
// build (build/) and a CPU with AVX-512F; not part of the build:
//   g++ -O3 -fopenmp -std=gnu++17 -Ibuild/include scripts/bench_gemm_threaded.cpp \
//     build/libattn_ops.a build/libattn_engine.a build/libattn_ops.a -lopenblas -o /tmp/bench_gemm_threaded
//   OMP_WAIT_POLICY=passive /tmp/bench_gemm_threaded
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "attn/ops/sgemm_avx512.h"

namespace {

struct Shape {
  const char* name;
  bool trans_a, trans_b;
  int64_t m, n, k;
};

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main() {
  if (!attn::sgemm_avx512_available()) {
    std::fprintf(stderr, "bench_gemm_threaded: this CPU has no AVX-512F\n");
    return 1;
  }
  const Shape shapes[] = {
      {"FFN up, 4096 x 1200 x 300, B^T", false, true, 4096, 1200, 300},
      {"FFN down, 4096 x 300 x 1200, B^T", false, true, 4096, 300, 1200},
      {"linear, 4096 x 300 x 300, B^T", false, true, 4096, 300, 300},
      {"weight grad, 1200 x 300 x 4096, A^T", true, false, 1200, 300, 4096},
      {"square, 1024^3", false, false, 1024, 1024, 1024},
  };
  std::printf("%-38s %12s %12s %14s %9s\n", "product (2 threads, 21 pairs)", "fixed ms", "threaded ms",
              "threaded/fixed", "same bits");
  for (const Shape& s : shapes) {
    std::vector<float> a(s.m * s.k), b(s.k * s.n), fixed(s.m * s.n), threaded(s.m * s.n);
    for (size_t i = 0; i < a.size(); ++i) a[i] = float(i % 7) * 0.1f - 0.2f;
    for (size_t i = 0; i < b.size(); ++i) b[i] = float(i % 5) * 0.1f - 0.2f;
    const int64_t lda = s.trans_a ? s.m : s.k, ldb = s.trans_b ? s.k : s.n;
    double half_ms[2] = {0, 0};
    const auto fixed_split = [&] {
#pragma omp parallel num_threads(2)
      {
        const auto start = std::chrono::steady_clock::now();
        const int t = omp_get_thread_num();
        const int64_t r0 = t * s.m / 2, r1 = (t + 1) * s.m / 2;
        attn::sgemm_avx512(s.trans_a, s.trans_b, r1 - r0, s.n, s.k, a.data() + (s.trans_a ? r0 : r0 * lda), lda,
                           b.data(), ldb, 0.0f, fixed.data() + r0 * s.n, s.n);
        half_ms[t] = ms_since(start);
      }
    };
    const auto shared = [&] {
      attn::sgemm_avx512_threaded(s.trans_a, s.trans_b, s.m, s.n, s.k, a.data(), lda, b.data(), ldb, 0.0f,
                                  threaded.data(), s.n, nullptr, false, 2);
    };
    std::vector<double> t_fixed, t_threaded, ratio, half0, half1;
    for (int rep = 0; rep < 22; ++rep) {
      auto start = std::chrono::steady_clock::now();
      fixed_split();
      const double f = ms_since(start);
      start = std::chrono::steady_clock::now();
      shared();
      const double d = ms_since(start);
      if (rep == 0) continue;  // warm-up
      t_fixed.push_back(f);
      t_threaded.push_back(d);
      ratio.push_back(d / f);
      half0.push_back(half_ms[0]);
      half1.push_back(half_ms[1]);
    }
    std::printf("%-38s %12.2f %12.2f %14.3f %9s   (fixed split's halves: thread 0 %.2f, thread 1 %.2f ms)\n", s.name,
                median(t_fixed), median(t_threaded), median(ratio), fixed == threaded ? "yes" : "NO", median(half0),
                median(half1));
  }
}
