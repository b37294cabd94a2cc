// Standalone: the fused Adam update (ops/optim_update.h) on a 50000 x 128
// float32 parameter (the default run's embedding), median of 21 steps. The
// figures in docs/benchmarks.md ("Eighteenth pass") come from it, built once
// against this checkout's libraries and once against another revision's
// (scripts/bench_revisions.sh builds those under build-rev-<REV>/build). Not
// part of the build:
//   g++ -O2 -std=c++17 -fopenmp -Ibuild/include scripts/bench_optim_update.cpp \
//       build/libattn_ops.a build/libattn_engine.a -lopenblas -o /tmp/bench_optim_update
//   /tmp/bench_optim_update; OMP_NUM_THREADS=1 /tmp/bench_optim_update
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "attn/engine/random.h"
#include "attn/ops/optim_update.h"

int main() {
  using namespace attn;
  Generator gen(1);
  const int64_t n = 50000 * 128;
  Tensor p = rand_uniform({n}, -1, 1, gen), g = rand_uniform({n}, -1, 1, gen);
  Tensor m = rand_uniform({n}, -0.1, 0.1, gen), v = rand_uniform({n}, 0, 0.1, gen);
  std::vector<double> ms;
  for (int step = 1; step <= 21; ++step) {
    const auto t0 = std::chrono::steady_clock::now();
    adam_update_(p, g, m, v, AdamHyper{1e-3, 0.9, 0.999, 1e-8, step});
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  // A sample of the results, so that two builds can be seen to agree.
  double sample = 0;
  for (int64_t i = 0; i < n; i += 997) sample += p.data<float>()[i] + m.data<float>()[i] + v.data<float>()[i];
  std::printf("adam on %lld floats: median %.2f ms (min %.2f); sample of the results %.9g\n",
              static_cast<long long>(n), ms[10], ms[0], sample);
}
