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

// One row's columns [0, w): the selected gradient into d, its values added
// to the double accumulators.
template <class T>
inline __attribute__((always_inline)) void select_row(const T* __restrict g, const T* __restrict y, int64_t w,
                                                      T* __restrict d, double* __restrict acc) {
  for (int64_t j = 0; j < w; ++j) {
    const T v = y[j] > T(0) ? g[j] : T(0);
    d[j] = v;
    acc[j] += static_cast<double>(v);
  }
}

// The same in place (d is g): one pointer, so the loop needs no alias check.
template <class T>
inline __attribute__((always_inline)) void select_row_in_place(T* __restrict d, const T* __restrict y, int64_t w,
                                                               double* __restrict acc) {
  for (int64_t j = 0; j < w; ++j) {
    const T v = y[j] > T(0) ? d[j] : T(0);
    d[j] = v;
    acc[j] += static_cast<double>(v);
  }
}

// Columns [0, w) of rows [0, rows) (row stride ld) into the zeroed double
// accumulators; a SIMD clone (ops/vector_math.h), the select a blend.
template <class T>
ATTN_SIMD_CLONES void select_and_sum_block(const T* grad, const T* output, int64_t rows, int64_t ld, int64_t w,
                                           T* grad_in, double* acc, T* sums) {
  for (int64_t i = 0; i < rows; ++i) {
    if (grad == grad_in) {
      select_row_in_place(grad_in + i * ld, output + i * ld, w, acc);
    } else {
      select_row(grad + i * ld, output + i * ld, w, grad_in + i * ld, acc);
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
