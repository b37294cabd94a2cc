// Standalone: how one product of m x n x k (A transposed, the weight gradient's
// layout) splits over 2 OpenMP threads with OpenBLAS serial in each: by output
// rows, by output columns, or by slices of k summed afterwards. The figures in
// docs/engine.md ("GEMM threading", item 3) come from it. Not part of the build:
//   g++ -O2 -fopenmp scripts/bench_gemm_splits.cpp -o /tmp/bench_gemm_splits -lopenblas
//   OMP_WAIT_POLICY=passive /tmp/bench_gemm_splits 300 300 4096
#include <cblas.h>
#include <omp.h>
#include <chrono>
#include <cstdio>
#include <vector>
#include <algorithm>
extern "C" void openblas_set_num_threads(int);
int main(int argc, char** argv) {
  int M = atoi(argv[1]), N = atoi(argv[2]), K = atoi(argv[3]);
  openblas_set_num_threads(1);
  std::vector<float> X((size_t)K * M), G((size_t)K * N), C((size_t)M * N), P((size_t)2 * M * N);
  for (size_t i = 0; i < X.size(); ++i) X[i] = (i % 7) * 0.1f;
  for (size_t i = 0; i < G.size(); ++i) G[i] = (i % 5) * 0.1f;
  auto msplit = [&] {
#pragma omp parallel num_threads(2)
    { int t = omp_get_thread_num(); int r0 = t * M / 2, r1 = (t + 1) * M / 2;
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, r1 - r0, N, K, 1.f, X.data() + r0, M, G.data(), N, 0.f, C.data() + r0 * N, N); }
  };
  auto nsplit = [&] {
#pragma omp parallel num_threads(2)
    { int t = omp_get_thread_num(); int c0 = t * N / 2, c1 = (t + 1) * N / 2;
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, M, c1 - c0, K, 1.f, X.data(), M, G.data() + c0, N, 0.f, C.data() + c0, N); }
  };
  auto ksplit = [&] {
#pragma omp parallel num_threads(2)
    { int t = omp_get_thread_num(); int k0 = t * K / 2, k1 = (t + 1) * K / 2;
      float* out = t == 0 ? C.data() : P.data();
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, M, N, k1 - k0, 1.f, X.data() + (size_t)k0 * M, M, G.data() + (size_t)k0 * N, N, 0.f, out, N);
#pragma omp barrier
      int64_t e0 = (int64_t)t * M * N / 2, e1 = (int64_t)(t + 1) * M * N / 2;
      for (int64_t e = e0; e < e1; ++e) C[e] += P[e];
    }
  };
  auto blas = [&] { openblas_set_num_threads(2); cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, M, N, K, 1.f, X.data(), M, G.data(), N, 0.f, C.data(), N); openblas_set_num_threads(1);};
  const char* names[] = {"msplit", "nsplit", "ksplit"};
  for (int round = 0; round < 3; ++round)
  for (int v = 0; v < 3; ++v) {
    std::vector<double> ts;
    for (int r = 0; r < 15; ++r) {
      auto s = std::chrono::steady_clock::now();
      if (v == 0) msplit(); else if (v == 1) nsplit(); else ksplit();
      ts.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - s).count());
    }
    std::sort(ts.begin(), ts.end());
    printf("%s %.3f ms (%.1f GFLOP/s)  ", names[v], ts[7], 2.0 * M * N * K / ts[7] / 1e6);
    if (v == 2) printf("\n");
  }
}
