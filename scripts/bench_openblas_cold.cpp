// Standalone: OpenBLAS's single-threaded float32 GEMM on a fresh work buffer
// and again after one product with 512 columns has run (docs/engine.md,
// "OpenBLAS's cold buffers"). Each shape is timed for 0.3 s; the first
// round runs cold, the warming product runs between the rounds. Not part of
// the build:
//   g++ -O2 scripts/bench_openblas_cold.cpp -o /tmp/bench_openblas_cold -lopenblas
//   /tmp/bench_openblas_cold
#include <cblas.h>

#include <chrono>
#include <cstdio>
#include <vector>

extern "C" void openblas_set_num_threads(int);

// GFLOP/s of m x n x k products repeated for `seconds`.
static double rate(int m, int n, int k, double seconds) {
  std::vector<float> a((size_t)m * k, 0.5f), b((size_t)k * n, 0.25f), c((size_t)m * n);
  double flops = 0;
  const auto start = std::chrono::steady_clock::now();
  double elapsed = 0;
  do {  // at least one product
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a.data(), k, b.data(), n, 0.0f, c.data(), n);
    flops += 2.0 * m * n * k;
    elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  } while (elapsed < seconds);
  return flops / elapsed / 1e9;
}

int main() {
  openblas_set_num_threads(1);
  const int shapes[][3] = {{256, 256, 256}, {4096, 300, 300}, {64, 150, 150}, {4096, 150, 150}};
  for (int round = 0; round < 2; ++round) {
    std::printf(round == 0 ? "fresh buffer:" : "after one 256 x 512 x 256 product:");
    for (const auto& s : shapes) std::printf("  %dx%dx%d %.1f", s[0], s[1], s[2], rate(s[0], s[1], s[2], 0.3));
    std::printf(" GFLOP/s\n");
    if (round == 0) rate(256, 512, 256, 0.0);
  }
}
