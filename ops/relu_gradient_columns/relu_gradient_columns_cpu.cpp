// CPU kernel of relu_gradient_columns: threads take blocks of whole rows
// (ops/cpu/row_block_sums.h), each summing its block's selected values per
// column in double as it stores them; the blocks' sums are then added in
// order, so a column's sum is the same sequence of additions whatever the
// thread count.
#include "attn/engine/cpu_loops.h"
#include "attn/ops/relu_gradient_columns/relu_gradient_columns_kernels.h"
#include "attn/ops/cpu/row_block_sums.h"
#include "attn/ops/cpu/vector_math.h"

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

// Rows [0, rows), columns [0, w) (rows ld apart) added to the double
// accumulators; a SIMD clone (ops/cpu/vector_math.h), the select a blend.
template <class T>
ATTN_SIMD_CLONES void select_and_sum_block(const T* grad, const T* output, int64_t rows, int64_t ld, int64_t w,
                                           T* grad_in, double* acc) {
  for (int64_t i = 0; i < rows; ++i) {
    if (grad == grad_in) {
      select_row_in_place(grad_in + i * ld, output + i * ld, w, acc);
    } else {
      select_row(grad + i * ld, output + i * ld, w, grad_in + i * ld, acc);
    }
  }
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
    column_totals_by_blocks(rows, cols, ps, [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1, double* acc) {
      const int64_t at = r0 * cols + c0;
      select_and_sum_block(pg + at, py + at, r1 - r0, cols, c1 - c0, pd + at, acc);
    });
  });
}

}  // namespace attn
