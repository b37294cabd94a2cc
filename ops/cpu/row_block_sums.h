// Column sums of a row-major [rows, cols] pass, threaded by blocks of rows:
// each block keeps its own double partial sums, and the blocks are added in
// order afterwards. A thread then streams whole rows of a narrow matrix
// (split by columns instead, two threads read alternate halves of every
// row and write both sides of the cache line between them: a [4096, 300]
// pass ran slower on two threads than on one); a wide one is also cut into
// column chunks, which bounds the partial sums' memory. The block count
// depends on the problem's size only, never on the thread count, so every
// column's sum is the same sequence of additions, bit for bit, on any
// machine.
#pragma once
#include <algorithm>
#include <cstdint>

#include "attn/engine/parallel.h"
#include "attn/engine/tensor.h"

namespace attn {

// Upper bound on the blocks whose partial sums are kept (their memory is
// blocks * cols doubles).
constexpr int64_t kMaxRowBlocks = 64;

// How many row blocks a [rows, cols] pass is cut into: about one per
// kParallelGrain elements, at most one per row and kMaxRowBlocks in all.
inline int64_t row_blocks(int64_t rows, int64_t cols) {
  const int64_t by_work = (rows * cols + kParallelGrain - 1) / kParallelGrain;
  return std::max<int64_t>(1, std::min({by_work, rows, kMaxRowBlocks}));
}

// A pass with fewer row blocks than threads (a few rows of many columns) is
// also cut into column chunks, one per remaining thread, of at least this
// many columns: long runs of each row for the prefetcher, and at most one
// cache line per row shared by two chunks. The chunks do not change any
// column's order of additions.
constexpr int64_t kMinColumnChunk = 1024;
// Columns whose double accumulators a visit keeps (16 KiB: in L1 beside the
// rows streaming through). Measured on MTSA's per-head bias gradient, a
// [64, 19200] pass: 9600 accumulators per thread went to L2 on every row.
constexpr int64_t kAccumulatorColumns = 2048;
// At most this many doubles of partial sums (blocks * cols) in all.
constexpr int64_t kMaxPartialSums = int64_t{1} << 15;

// Calls visit(r0, r1, c0, c1, acc) for the rows [r0, r1) and columns [c0,
// c1) of each block, acc being c1 - c0 zeroed doubles of the block's own
// (the blocks spread over the threads); then totals[j] (j < cols) = the row
// blocks' partials of column j added in order, rounded once to T. The
// partials come from the caching allocator (a fresh vector of a wide
// pass's partials would be mapped and faulted in every call).
template <class T, class Visit>
void column_totals_by_blocks(int64_t rows, int64_t cols, T* totals, const Visit& visit) {
  const int64_t blocks =
      std::max<int64_t>(1, std::min(row_blocks(rows, cols), kMaxPartialSums / std::max<int64_t>(cols, 1)));
  const int64_t per_block = (rows + blocks - 1) / blocks;
  const int64_t spare_threads = (parallel_threads() + blocks - 1) / blocks;
  const int64_t chunks = std::max<int64_t>(1, std::min(spare_threads, cols / kMinColumnChunk));
  const int64_t chunk = ((cols + chunks - 1) / chunks + 15) / 16 * 16;
  Tensor partials = empty({std::max<int64_t>(1, blocks * cols)}, DType::F64);
  double* partial = partials.data<double>();
  parallel_for(blocks * chunks, 1, [&](int64_t u0, int64_t u1) {
    for (int64_t u = u0; u < u1; ++u) {
      const int64_t b = u / chunks, r0 = std::min(rows, b * per_block), r1 = std::min(rows, r0 + per_block);
      const int64_t c0 = std::min(cols, u % chunks * chunk), c1 = std::min(cols, c0 + chunk);
      double* acc = partial + b * cols + c0;
      std::fill(acc, acc + (c1 - c0), 0.0);
      // A wide chunk is visited kAccumulatorColumns at a time, so that its
      // accumulators stay in L1 while its rows stream past (the order of each
      // column's additions is unchanged).
      if (r0 < r1)
        for (int64_t t0 = c0; t0 < c1; t0 += kAccumulatorColumns)
          visit(r0, r1, t0, std::min(c1, t0 + kAccumulatorColumns), acc + (t0 - c0));
    }
  });
  for (int64_t b = 1; b < blocks; ++b)
    for (int64_t j = 0; j < cols; ++j) partial[j] += partial[b * cols + j];
  for (int64_t j = 0; j < cols; ++j) totals[j] = static_cast<T>(partial[j]);
}

}  // namespace attn
