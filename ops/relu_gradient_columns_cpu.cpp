// CPU kernel of relu_gradient_columns: threads take blocks of columns, each
// walking every row of its block in order, so a column's sum is the same
// sequence of additions whatever the thread count; the rows' selected values
// are stored as they are summed.
#include <algorithm>
#include <vector>

#include "attn/engine/cpu_loops.h"
#include "attn/ops/relu_gradient_columns_kernels.h"
#include "attn/ops/vector_math.h"

namespace attn {

namespace {

// Columns [0, w) of rows [0, rows) (row stride ld) into the zeroed double
// accumulators; a SIMD clone (ops/vector_math.h), the select a blend.
template <class T>
ATTN_SIMD_CLONES void select_and_sum_block(const T* __restrict grad, const T* __restrict output, int64_t rows,
                                           int64_t ld, int64_t w, T* __restrict grad_in, double* __restrict acc,
                                           T* __restrict sums) {
  for (int64_t i = 0; i < rows; ++i) {
    const T* g = grad + i * ld;
    const T* y = output + i * ld;
    T* d = grad_in + i * ld;
    for (int64_t j = 0; j < w; ++j) {
      const T v = y[j] > T(0) ? g[j] : T(0);
      d[j] = v;
      acc[j] += static_cast<double>(v);
    }
  }
  for (int64_t j = 0; j < w; ++j) sums[j] = static_cast<T>(acc[j]);
}

}  // namespace

void relu_gradient_columns_cpu(const Tensor& grad, const Tensor& output, const Tensor& grad_in, const Tensor& sums) {
  const int64_t rows = grad.size(0), cols = grad.size(1);
  dispatch_floating(grad.dtype(), "relu_gradient_columns", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* pg = grad.data<T>();
    const T* py = output.data<T>();
    T* pd = grad_in.data<T>();
    T* ps = sums.data<T>();
    const int64_t grain = std::max<int64_t>(16, kParallelGrain / std::max<int64_t>(rows, 1));
    parallel_for(cols, grain, [&](int64_t c0, int64_t c1) {
      std::vector<double> acc(static_cast<size_t>(c1 - c0), 0.0);
      select_and_sum_block(pg + c0, py + c0, rows, cols, c1 - c0, pd + c0, acc.data(), ps + c0);
    });
  });
}

}  // namespace attn
