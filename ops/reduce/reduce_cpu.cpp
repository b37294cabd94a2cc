#include "attn/engine/cpu_loops.h"
#include "attn/ops/cpu/vector_math.h"
#include "attn/ops/reduce/reduce_kernels.h"
#include "attn/ops/cpu/row_block_sums.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

namespace attn {

namespace {

// Sums accumulate in double (float32 inputs too: a million-element float32
// sum keeps ~1e-10 relative error instead of ~1e-3), with eight independent
// partial sums so the loop vectorises without reassociation (no -ffast-math).
// kSquares: the sum of the elements' squares, each formed in double. A SIMD
// clone (ops/cpu/vector_math.h).
template <bool kSquares, class T> ATTN_SIMD_CLONES double sum_contiguous(const T* x, int64_t n) {
  const auto term = [](T v) {
    const double d = static_cast<double>(v);
    return kSquares ? d * d : d;
  };
  double acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; ++k) acc[k] += term(x[i + k]);
  double total = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
  for (; i < n; ++i) total += term(x[i]);
  return total;
}

// Rows longer than this are summed in chunks of this many elements, the
// chunks' double partials then added in order: a whole-tensor sum (a loss
// over all outputs, one row of a million elements) runs on every thread
// instead of one. The chunks depend on n only, so every sum is the same
// sequence of additions whatever the thread count; a row of at most one
// chunk is summed exactly as before.
constexpr int64_t kSumChunk = int64_t{1} << 16;

// finish(m, total) for each row m < outer of the [outer, n] matrix x, total
// being sum_chunk over its chunks added in order.
template <class T, class SumChunk, class Finish>
void sum_rows_by_chunks(const T* x, int64_t outer, int64_t n, const SumChunk& sum_chunk, const Finish& finish) {
  if (n <= kSumChunk) {
    parallel_for(outer, row_grain(n), [&](int64_t b, int64_t e) {
      for (int64_t m = b; m < e; ++m) finish(m, sum_chunk(x + m * n, n));
    });
    return;
  }
  const int64_t chunks = (n + kSumChunk - 1) / kSumChunk;
  std::vector<double> partial(static_cast<size_t>(outer * chunks));
  parallel_for(outer * chunks, 1, [&](int64_t b, int64_t e) {
    for (int64_t u = b; u < e; ++u) {
      const int64_t m = u / chunks, c0 = u % chunks * kSumChunk;
      partial[static_cast<size_t>(u)] = sum_chunk(x + m * n + c0, std::min(kSumChunk, n - c0));
    }
  });
  for (int64_t m = 0; m < outer; ++m) {
    double total = 0;
    for (int64_t c = 0; c < chunks; ++c) total += partial[static_cast<size_t>(m * chunks + c)];
    finish(m, total);
  }
}

}  // namespace

void reduce_rows_cpu(ReduceOp op, const Tensor& x, int64_t outer, int64_t n, const Tensor& out, const Tensor& argmax) {
  dispatch_floating(x.dtype(), reduce_op_name(op), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* px = x.data<T>();
    int64_t* pi = argmax.defined() ? argmax.data<int64_t>() : nullptr;
    if (op == ReduceOp::SumOfSquares) {
      double* po = out.data<double>();
      sum_rows_by_chunks(px, outer, n, [](const T* x, int64_t len) { return sum_contiguous<true>(x, len); },
                         [&](int64_t m, double total) { po[m] = total; });
      return;
    }
    T* po = out.data<T>();
    if (op == ReduceOp::Sum) {
      sum_rows_by_chunks(px, outer, n, [](const T* x, int64_t len) { return sum_contiguous<false>(x, len); },
                         [&](int64_t m, double total) { po[m] = static_cast<T>(total); });
      return;
    }
    parallel_for(outer, row_grain(n), [&](int64_t b, int64_t e) {
      for (int64_t m = b; m < e; ++m) {
        const T* row = px + m * n;
        T best = n > 0 ? row[0] : -std::numeric_limits<T>::infinity();
        int64_t at = 0;
        for (int64_t i = 1; i < n; ++i)
          if (row[i] > best) {
            best = row[i];
            at = i;
          }
        po[m] = best;
        if (pi) pi[m] = at;
      }
    });
  });
}

namespace {

// a[j] += the sum over rows i < n of base[i * inner + j], for j < w, in
// double. A SIMD clone (ops/cpu/vector_math.h): the baseline build converts and
// adds two doubles at a time.
template <class T>
ATTN_SIMD_CLONES void sum_column_block(const T* base, int64_t n, int64_t inner, int64_t w, double* __restrict a) {
  // Four rows per pass over the accumulators: a quarter of their loads and
  // stores, which bound this loop, for the same reads of x. The order of the
  // additions is fixed per column, whatever the threads.
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const T* __restrict r0 = base + i * inner;
    const T* __restrict r1 = r0 + inner;
    const T* __restrict r2 = r1 + inner;
    const T* __restrict r3 = r2 + inner;
    for (int64_t j = 0; j < w; ++j)
      a[j] += (static_cast<double>(r0[j]) + static_cast<double>(r1[j])) +
              (static_cast<double>(r2[j]) + static_cast<double>(r3[j]));
  }
  for (; i < n; ++i) {
    const T* __restrict r = base + i * inner;
    for (int64_t j = 0; j < w; ++j) a[j] += static_cast<double>(r[j]);
  }
}

}  // namespace

void sum_columns_cpu(const Tensor& x, int64_t outer, int64_t n, int64_t inner, const Tensor& out) {
  dispatch_floating(x.dtype(), "sum", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* px = x.data<T>();
    T* po = out.data<T>();
    if (outer == 1) {  // one [n, inner] matrix: by blocks of rows (ops/cpu/row_block_sums.h)
      column_totals_by_blocks(n, inner, po, [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1, double* acc) {
        sum_column_block(px + r0 * inner + c0, r1 - r0, inner, c1 - c0, acc);
      });
      return;
    }
    // Threads split the outer * inner columns; a range may span outer slices.
    const int64_t grain = std::max<int64_t>(64, kParallelGrain / std::max<int64_t>(n, 1));
    parallel_for(outer * inner, grain, [&](int64_t b, int64_t e) {
      std::vector<double> acc;
      for (int64_t c = b; c < e;) {
        const int64_t o = c / inner, f0 = c % inner, w = std::min(inner - f0, e - c);
        acc.assign(static_cast<size_t>(w), 0.0);
        sum_column_block(px + o * n * inner + f0, n, inner, w, acc.data());
        for (int64_t j = 0; j < w; ++j) po[o * inner + f0 + j] = static_cast<T>(acc[static_cast<size_t>(j)]);
        c += w;
      }
    });
  });
}

void max_backward_cpu(const Tensor& grad, const Tensor& argmax, int64_t outer, int64_t n, const Tensor& grad_in) {
  dispatch_floating(grad.dtype(), "max_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* pg = grad.data<T>();
    const int64_t* pi = argmax.data<int64_t>();
    T* pd = grad_in.data<T>();
    std::memset(pd, 0, static_cast<size_t>(outer * n) * sizeof(T));
    for (int64_t m = 0; m < outer; ++m) pd[m * n + pi[m]] = pg[m];
  });
}

}  // namespace attn
