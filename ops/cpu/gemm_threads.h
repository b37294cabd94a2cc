// Who threads a CPU GEMM call: nobody (small, or already inside a parallel
// region), the engine (products or row blocks spread over its OpenMP threads,
// OpenBLAS serial in each; or, for one short deep product, slices of its
// reduction summed afterwards), or OpenBLAS (its own threads on one product
// at a time). A pure function of the call's shape so that tests can reach both
// threaded branches on purpose.
#pragma once
#include <algorithm>
#include <cstdint>

namespace attn {

enum class GemmThreading { serial, engine_split, engine_split_depth, blas_threads };

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

// A single product whose row blocks would be under this many rows per thread,
// with at least kSplitDepthMinSlice of its reduction per thread, is split
// along k instead: each thread multiplies its slice of k into a full m x n
// partial and the partials are added. Row blocks make every thread pack all
// of B (k x n) for few rows of A; slices of k pack each part of B once. A
// weight gradient (300 x 300 x 4096 on 2 threads) ran 5-6% faster, 150 x 150
// x 4096 11%; at 600 rows (300 per thread) the two were level
// (docs/engine.md, "GEMM threading").
constexpr int64_t kSplitDepthMaxRowsPerThread = 256;
constexpr int64_t kSplitDepthMinSlice = 512;

// `batch` products of m x n x k with `threads` threads available to the
// caller (1 inside a parallel region).
inline GemmThreading choose_gemm_threading(int64_t batch, int64_t m, int64_t n, int64_t k, int64_t threads) {
  const int64_t work = m * n * k;
  if (threads <= 1 || batch * work < kSmallGemmWork) return GemmThreading::serial;
  const int64_t shortest = std::min({m, n, k}), longest = std::max({m, n, k});
  if (batch < threads && work >= kBlasThreadedGemmWork && longest <= kBlasThreadedMaxAspect * shortest)
    return GemmThreading::blas_threads;
  if (batch == 1 && m < kSplitDepthMaxRowsPerThread * threads && k >= kSplitDepthMinSlice * threads)
    return GemmThreading::engine_split_depth;
  return GemmThreading::engine_split;
}

}  // namespace attn
