// Standalone: two versions of the engine's float32 GEMM (ops/cpu/sgemm_avx512.cpp)
// compiled into one program, each in its own namespace (va, vb), timed in
// alternation on the models' shapes, one thread. Interleaving them in one
// process keeps the machine's changes of speed out of the ratio, which
// separate runs of two builds do not. Built and run by
// scripts/bench_sgemm_ab.sh, which writes va.cpp and vb.cpp.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "va.cpp"
#include "vb.cpp"

namespace {

struct ProductShape {
  const char* name;
  bool trans_a, trans_b;
  int m, n, k, count;  // count products of m x n x k, each on its own operands
};

}  // namespace

int main() {
  const ProductShape shapes[] = {
      {"q k^T, 64 x 64 x 150, B^T", false, true, 64, 64, 150, 128},
      {"dO V^T, 64 x 64 x 300, B^T", false, true, 64, 64, 300, 128},
      {"P V, 64 x 300 x 64", false, false, 64, 300, 64, 128},
      {"P^T dO, 64 x 300 x 64, A^T", true, false, 64, 300, 64, 128},
      {"per head, 4096 x 150 x 150", false, false, 4096, 150, 150, 2},
      {"linear, 2048 x 300 x 300, B^T", false, true, 2048, 300, 300, 1},
      {"FFN up, 2048 x 1200 x 300, B^T", false, true, 2048, 1200, 300, 1},
      {"FFN down, 2048 x 300 x 1200, B^T", false, true, 2048, 300, 1200, 1},
      {"weight grad, 300 x 300 x 2048, A^T", true, false, 300, 300, 2048, 1},
      {"weight grad, 1200 x 300 x 2048, A^T", true, false, 1200, 300, 2048, 1},
      {"square, 1024^3", false, false, 1024, 1024, 1024, 1},
  };
  std::printf("%-38s %10s %10s %8s\n", "product (one thread, median of 15)", "va GFLOP/s", "vb GFLOP/s", "vb / va");
  for (const ProductShape& s : shapes) {
    const size_t a_size = size_t(s.m) * s.k, b_size = size_t(s.k) * s.n, c_size = size_t(s.m) * s.n;
    std::vector<float> a(a_size * s.count), b(b_size * s.count), c(c_size * s.count);
    for (size_t i = 0; i < a.size(); ++i) a[i] = float(i % 7) * 0.1f;
    for (size_t i = 0; i < b.size(); ++i) b[i] = float(i % 5) * 0.1f;
    const auto time_one = [&](auto gemm) {
      const auto start = std::chrono::steady_clock::now();
      for (int t = 0; t < s.count; ++t)
        gemm(s.trans_a, s.trans_b, s.m, s.n, s.k, a.data() + t * a_size, s.trans_a ? s.m : s.k, b.data() + t * b_size,
             s.trans_b ? s.k : s.n, 0.0f, c.data() + t * c_size, s.n, nullptr, false);
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    std::vector<double> ta, tb;
    for (int rep = 0; rep < 15; ++rep) {
      ta.push_back(time_one(attn::va::sgemm_avx512));
      tb.push_back(time_one(attn::vb::sgemm_avx512));
    }
    std::sort(ta.begin(), ta.end());
    std::sort(tb.begin(), tb.end());
    const double flop = 2.0 * s.count * s.m * s.n * s.k;
    std::printf("%-38s %10.1f %10.1f %8.3f\n", s.name, flop / ta[7] / 1e9, flop / tb[7] / 1e9, ta[7] / tb[7]);
  }
}
