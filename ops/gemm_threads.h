// Who threads a CPU GEMM call: nobody (small, or already inside a parallel
// region), the engine (products or row blocks spread over its OpenMP threads,
// OpenBLAS serial in each), or OpenBLAS (its own threads on one product at a
// time). A pure function of the call's shape so that tests can reach both
// threaded branches on purpose.
#pragma once
#include <algorithm>
#include <cstdint>

namespace attn {

enum class GemmThreading { serial, engine_split, blas_threads };

// Below this many multiply-adds a product is not worth a thread fork.
constexpr int64_t kSmallGemmWork = 1 << 18;

// A product goes to OpenBLAS's own threads when the call has fewer products
// than threads, the product has at least this many multiply-adds, and no side
// is more than kBlasThreadedMaxAspect times another. Measured on a loaded
// 2-core machine (docs/engine.md, "GEMM threading"): a single square product
// of 512 to 768 was 6-49% faster on OpenBLAS's threads; at 1024 and 2048 the
// two were level; below 512 the engine's split was level or faster. The
// models' products are tall or deep (linear layers [4096, 300] x [300, 300],
// weight gradients with k = 4096: aspect 6.8 and more), and sending them to
// OpenBLAS's threads made MTSA's and the Transformer's steps 10-20% slower.
constexpr int64_t kBlasThreadedGemmWork = int64_t{1} << 27;  // 512^3
constexpr int64_t kBlasThreadedMaxAspect = 4;

// `batch` products of m x n x k with `threads` threads available to the
// caller (1 inside a parallel region).
inline GemmThreading choose_gemm_threading(int64_t batch, int64_t m, int64_t n, int64_t k, int64_t threads) {
  const int64_t work = m * n * k;
  if (threads <= 1 || batch * work < kSmallGemmWork) return GemmThreading::serial;
  const int64_t shortest = std::min({m, n, k}), longest = std::max({m, n, k});
  if (batch < threads && work >= kBlasThreadedGemmWork && longest <= kBlasThreadedMaxAspect * shortest)
    return GemmThreading::blas_threads;
  return GemmThreading::engine_split;
}

}  // namespace attn
