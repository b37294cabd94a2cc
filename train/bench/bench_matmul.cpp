#include "attn/train/bench/bench_matmul.h"

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <thread>

#include "attn/engine/autograd.h"
#include "attn/engine/blas_threads.h"
#include "attn/engine/random.h"
#include "attn/ops/matmul/matmul.h"
#include "attn/util/cli_args.h"

namespace attn {

namespace {

struct Timings {
  std::vector<double> ms;
  double median() const {
    std::vector<double> s = ms;
    std::sort(s.begin(), s.end());
    const size_t h = s.size() / 2;
    return s.size() % 2 ? s[h] : 0.5 * (s[h - 1] + s[h]);
  }
  double min() const { return *std::min_element(ms.begin(), ms.end()); }
  double max() const { return *std::max_element(ms.begin(), ms.end()); }
};

template <class F>
double time_ms(const F& f) {
  auto start = std::chrono::steady_clock::now();
  f();
  auto stop = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::milli>(stop - start).count();
}

void blas_gemm(int n, const float* a, const float* b, float* c) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
}
void blas_gemm(int n, const double* a, const double* b, double* c) {
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a, n, b, n, 0.0, c, n);
}

template <class T>
double max_abs_difference(const Tensor& x, const Tensor& y) {
  const T* p = x.data<T>();
  const T* q = y.data<T>();
  double worst = 0;
  for (int64_t i = 0, n = x.numel(); i < n; ++i) worst = std::max(worst, std::abs(static_cast<double>(p[i] - q[i])));
  return worst;
}

// How far two correctly rounded GEMMs may differ, whatever their blocking and
// summation order: each computed c_ij is within gamma_n * (|A||B|)_ij of the
// exact value (Higham, Accuracy and Stability, eq. 3.13, with
// gamma_n = n u / (1 - n u) and u the unit roundoff), so two of them are
// within twice that of each other. |A||B| is formed in double.
template <class T>
double rounding_bound(const Tensor& a, const Tensor& b, int n) {
  const size_t count = static_cast<size_t>(n) * static_cast<size_t>(n);
  std::vector<double> abs_a(count), abs_b(count), abs_ab(count);
  for (size_t i = 0; i < count; ++i) {
    abs_a[i] = std::abs(static_cast<double>(a.data<T>()[i]));
    abs_b[i] = std::abs(static_cast<double>(b.data<T>()[i]));
  }
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, abs_a.data(), n, abs_b.data(), n, 0.0,
              abs_ab.data(), n);
  const double u = std::numeric_limits<T>::epsilon() / 2;
  const double gamma = n * u / (1 - n * u);
  return 2 * gamma * *std::max_element(abs_ab.begin(), abs_ab.end());
}

template <class T>
int bench(int64_t size, int64_t reps, int64_t warmup, DType dtype) {
  Generator gen(2024);
  Tensor a = rand_uniform({size, size}, -1.0, 1.0, gen, dtype);
  Tensor b = rand_uniform({size, size}, -1.0, 1.0, gen, dtype);
  Tensor reference = empty({size, size}, dtype);
  const int n = static_cast<int>(size);
  NoGrad no_grad;

  Tensor result;
  Timings engine, openblas;
  auto run_engine = [&] { result = matmul(a, b); };
  auto run_openblas = [&] {
    // The reference is OpenBLAS with its own threads, one per OpenMP thread
    // the engine uses (the engine runs it serially per piece).
    ScopedBlasThreads blas_threads(omp_get_max_threads());
    blas_gemm(n, a.data<T>(), b.data<T>(), reference.data<T>());
  };
  // Alternating the two per repetition exposes both to the same machine state.
  // Each side is timed warm and alone: a pause lets the other side's threads
  // stop spinning (OpenBLAS's workers busy-wait for up to ~0.1 s after a call;
  // seen here: the engine's 2048 product at 90 or 120 ms depending on it),
  // then an untimed call wakes this side's own threads, as in training where
  // kernels follow each other.
  auto time_warm = [&](const auto& run) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    run();
    return time_ms(run);
  };
  for (int64_t rep = 0; rep < warmup + reps; ++rep) {
    const double te = time_warm(run_engine);
    const double tb = time_warm(run_openblas);
    if (rep >= warmup) {
      engine.ms.push_back(te);
      openblas.ms.push_back(tb);
    }
  }

  const double flop = 2.0 * static_cast<double>(size) * static_cast<double>(size) * static_cast<double>(size);
  auto gflops = [flop](double ms) { return flop / (ms * 1e6); };
  const double diff = max_abs_difference<T>(result, reference);
  const double bound = rounding_bound<T>(a, b, n);
  std::printf("matmul benchmark: %lld x %lld %s, %lld reps after %lld warmup, threads %d (engine: OpenMP pieces; "
              "openblas: its own threads), OpenBLAS core %s\n",
              static_cast<long long>(size), static_cast<long long>(size), dtype_name(dtype),
              static_cast<long long>(reps), static_cast<long long>(warmup), omp_get_max_threads(),
              openblas_get_corename());
  auto report = [&](const char* name, const Timings& t) {
    std::printf("  %-9s median %.3f ms (min %.3f, max %.3f), %.1f GFLOP/s\n", name, t.median(), t.min(), t.max(),
                gflops(t.median()));
  };
  report("engine", engine);
  report("openblas", openblas);
  // Different blockings round differently: agreement to the rounding bound
  // is the check, not bit equality.
  std::printf("  max abs difference engine vs openblas: %g (rounding bound %g: %s)\n", diff, bound,
              diff <= bound ? "within" : "EXCEEDED");
  std::printf("matmul %lld: engine %.1f ms (%.1f GFLOP/s), openblas %.1f ms (%.1f GFLOP/s), ratio %.3f\n",
              static_cast<long long>(size), engine.median(), gflops(engine.median()), openblas.median(),
              gflops(openblas.median()), engine.median() / openblas.median());
  std::fflush(stdout);
  if (!(diff <= bound)) {
    std::fprintf(stderr, "attn bench-matmul: the engine's product differs from OpenBLAS's by %g, more than rounding allows (%g)\n",
                 diff, bound);
    return 1;
  }
  return 0;
}

}  // namespace

int run_bench_matmul(const std::vector<std::string>& args) {
  ArgParser p("bench-matmul",
              "Times the engine's matmul against a direct OpenBLAS GEMM on the same N x N inputs, alternating the two.");
  p.option("size", "2048", "matrix size N")
      .option("reps", "10", "timed repetitions")
      .option("warmup", "2", "untimed repetitions first")
      .option("dtype", "float32", "float32 or float64");
  p.example("attn bench-matmul --size 2048", "the engine's float32 product against OpenBLAS's, 10 timed repetitions");
  if (!p.parse(args)) {
    std::cout << p.help();
    return 0;
  }
  const int64_t size = p.get_int("size"), reps = p.get_int("reps"), warmup = p.get_int("warmup");
  const std::string dtype = p.get("dtype");
  if (size < 1 || size > 46340) throw UsageError("attn bench-matmul: --size must be in [1, 46340], got " + p.get("size"));
  if (reps < 1) throw UsageError("attn bench-matmul: --reps must be at least 1, got " + p.get("reps"));
  if (warmup < 0) throw UsageError("attn bench-matmul: --warmup must not be negative, got " + p.get("warmup"));
  if (dtype == "float32") return bench<float>(size, reps, warmup, DType::F32);
  if (dtype == "float64") return bench<double>(size, reps, warmup, DType::F64);
  throw UsageError("attn bench-matmul: --dtype must be float32 or float64, got '" + dtype + "'");
}

}  // namespace attn
