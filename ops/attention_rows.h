// The row-wise softmax pieces of the fused per-head attention kernels
// (dot_product_attention, window_attention): a masked softmax of one row of
// scores in place, and its backward. Written as plain loops over the row
// with independent partial maxima and sums, so they vectorise without
// reassociation; always inlined, so they compile for the calling kernel's
// SIMD clone.
#pragma once
#include <algorithm>
#include <cstdint>
#include <limits>

#include "attn/ops/vector_math.h"

namespace attn {

// The largest of x[0..n) (NaN never wins), in kLanes independent lanes so
// that the loop vectorises; max is exact, so any order gives the same value.
template <class T>
inline __attribute__((always_inline)) T row_max(const T* __restrict x, int64_t n) {
  constexpr int64_t kLanes = 16;
  T lanes[kLanes];
  for (int64_t t = 0; t < kLanes; ++t) lanes[t] = -std::numeric_limits<T>::infinity();
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int64_t t = 0; t < kLanes; ++t) lanes[t] = x[i + t] > lanes[t] ? x[i + t] : lanes[t];
  T m = -std::numeric_limits<T>::infinity();
  for (; i < n; ++i) m = x[i] > m ? x[i] : m;
  for (int64_t t = 0; t < kLanes; ++t) m = lanes[t] > m ? lanes[t] : m;
  return m;
}

// The sum of x[0..n) in kLanes partial sums (a fixed order: the result does
// not depend on the thread that runs it).
template <class T>
inline __attribute__((always_inline)) T row_sum(const T* __restrict x, int64_t n) {
  constexpr int64_t kLanes = 16;
  T lanes[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int64_t t = 0; t < kLanes; ++t) lanes[t] += x[i + t];
  T s = 0;
  for (; i < n; ++i) s += x[i];
  for (int64_t t = 0; t < kLanes; ++t) s += lanes[t];
  return s;
}

// Softmax of one row of scores over the valid keys, in place, after scaling;
// masked entries (whatever they held) become -inf before the max and so
// exactly 0 after the exp. A row without a valid key becomes all zeros.
template <class T>
inline __attribute__((always_inline)) void softmax_row(T* __restrict row, const uint8_t* __restrict ok, int64_t nk,
                                                       T scale) {
  const T lowest = -std::numeric_limits<T>::infinity();
  for (int64_t i = 0; i < nk; ++i) row[i] = ok[i] ? row[i] * scale : lowest;
  const T m = row_max(row, nk);
  if (m == lowest) {
    std::fill(row, row + nk, T(0));
    return;
  }
  for (int64_t i = 0; i < nk; ++i) row[i] = vector_math::exp(row[i] - m);
  const T inv = T(1) / row_sum(row, nk);  // the sum is >= 1: the largest valid score gives exp(0)
  for (int64_t i = 0; i < nk; ++i) row[i] *= inv;
}

// dS = scale P (dP - sum_i P dP) over the valid keys, in place of dP; 0 at
// masked keys, whose dP is selected away first.
template <class T>
inline __attribute__((always_inline)) void softmax_backward_row(const T* __restrict p, T* __restrict dp,
                                                                const uint8_t* __restrict ok, int64_t nk, T scale,
                                                                T* __restrict scratch) {
  for (int64_t i = 0; i < nk; ++i) {
    dp[i] = ok[i] ? dp[i] : T(0);
    scratch[i] = p[i] * dp[i];
  }
  const T delta = row_sum(scratch, nk);
  for (int64_t i = 0; i < nk; ++i) dp[i] = ok[i] ? scale * p[i] * (dp[i] - delta) : T(0);
}

}  // namespace attn
