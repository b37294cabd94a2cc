// Who threads a CPU GEMM call: nobody (small, or already inside a parallel
// region), the engine (products or row blocks spread over its OpenMP threads,
// OpenBLAS serial in each), or OpenBLAS (its own threads on one product at a
// time). A pure function of the call's shape so that tests can reach both
// threaded branches on purpose.
#pragma once
#include <cstdint>

namespace attn {

enum class GemmThreading { serial, engine_split, blas_threads };

// Below this many multiply-adds a product is not worth a thread fork.
constexpr int64_t kSmallGemmWork = 1 << 18;

// A product of at least this many multiply-adds, in a call with fewer
// products than threads, goes to OpenBLAS's own threads; see
// docs/engine.md ("GEMM threading") for the measurement behind it.
constexpr int64_t kBlasThreadedGemmWork = int64_t{1} << 24;

// `batch` products of m x n x k with `threads` threads available to the
// caller (1 inside a parallel region).
inline GemmThreading choose_gemm_threading(int64_t batch, int64_t m, int64_t n, int64_t k, int64_t threads) {
  const int64_t work = m * n * k;
  if (threads <= 1 || batch * work < kSmallGemmWork) return GemmThreading::serial;
  if (batch < threads && work >= kBlasThreadedGemmWork) return GemmThreading::blas_threads;
  return GemmThreading::engine_split;
}

}  // namespace attn
