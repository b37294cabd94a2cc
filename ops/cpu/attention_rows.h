// The row-wise softmax pieces of the fused per-head attention kernels
// (dot_product_attention, window_attention): the masked softmax of a panel
// of rows of scores in place, a pass at a time, and its backward. Maxima
// and sums run on 64-byte GCC vector types with a fixed order of additions;
// always inlined, so they compile for the calling kernel's SIMD clone.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>

#include "attn/ops/cpu/panel_product.h"
#include "attn/ops/cpu/vector_math.h"

namespace attn {

// The largest of x[0..n) (NaN never wins), and the sum of x[0..n) in a
// fixed order (the result does not depend on the thread that runs it). The
// whole 64-byte vectors of the row go through GCC vector types, as in
// ops/cpu/panel_product.h: written as 16 independent scalar lanes GCC kept them
// as 16 scalar registers (a scalar max or add per element), and a 64-key
// softmax took 2.5 cycles per score where its exps take 0.8 (1.4 now).
template <class T>
inline __attribute__((always_inline)) T row_max(const T* __restrict x, int64_t n) {
  using V = typename PanelVector<T>::type;
  constexpr int64_t L = PanelVector<T>::lanes;
  const T lowest = -std::numeric_limits<T>::infinity();
  V best = V{} + lowest;
  int64_t i = 0;
  for (; i + L <= n; i += L) {
    V v;
    std::memcpy(&v, x + i, sizeof v);
    best = v > best ? v : best;  // false for NaN: it never wins
  }
  T m = lowest;
  for (; i < n; ++i) m = x[i] > m ? x[i] : m;
  for (int64_t t = 0; t < L; ++t) m = best[t] > m ? best[t] : m;  // max is exact: any order gives the same value
  return m;
}

template <class T>
inline __attribute__((always_inline)) T row_sum(const T* __restrict x, int64_t n) {
  using V = typename PanelVector<T>::type;
  constexpr int64_t L = PanelVector<T>::lanes;
  V acc{};
  int64_t i = 0;
  for (; i + L <= n; i += L) {
    V v;
    std::memcpy(&v, x + i, sizeof v);
    acc += v;
  }
  T lanes[L];
  for (int64_t t = 0; t < L; ++t) lanes[t] = acc[t];
  for (int64_t width = L / 2; width >= 1; width /= 2)  // a tree, not a chain of L dependent adds
    for (int64_t t = 0; t < width; ++t) lanes[t] += lanes[t + width];
  T s = lanes[0];
  for (; i < n; ++i) s += x[i];
  return s;
}

// Softmax of `rows` rows of scores (ld apart) over their valid keys, in
// place, after scaling; row r's key mask is at ok + r * ok_ld (ok_ld 0: one
// mask for all). Masked entries (whatever they held) become -inf before the
// max and so exactly 0 after the exp; a row without a valid key becomes all
// zeros. A pass at a time over all the rows: each row's chain (maximum, exps,
// sum, division) no longer waits for the previous row's, and a 64 x 64
// panel ran 22% faster than row after row; each row gets the same
// arithmetic in the same order either way. `maxima` holds `rows` values.
template <class T>
inline __attribute__((always_inline)) void softmax_rows(T* __restrict scores, int64_t rows, int64_t ld,
                                                        const uint8_t* __restrict ok, int64_t ok_ld, int64_t nk,
                                                        T scale, T* __restrict maxima) {
  const T lowest = -std::numeric_limits<T>::infinity();
  for (int64_t r = 0; r < rows; ++r) {
    T* row = scores + r * ld;
    const uint8_t* keep = ok + r * ok_ld;
    for (int64_t i = 0; i < nk; ++i) row[i] = keep[i] ? row[i] * scale : lowest;
    maxima[r] = row_max(row, nk);
  }
  for (int64_t r = 0; r < rows; ++r) {
    T* row = scores + r * ld;
    const T m = maxima[r];
    if (m == lowest) continue;
    for (int64_t i = 0; i < nk; ++i) row[i] = vector_math::exp(row[i] - m);
  }
  for (int64_t r = 0; r < rows; ++r) {
    T* row = scores + r * ld;
    if (maxima[r] == lowest) {  // no valid key: all zeros
      std::fill(row, row + nk, T(0));
      continue;
    }
    const T inv = T(1) / row_sum(row, nk);  // the sum is >= 1: the largest valid score gives exp(0)
    for (int64_t i = 0; i < nk; ++i) row[i] *= inv;
  }
}

// dS = scale P (dP - sum_i P dP) over the valid keys, in place of dP, for
// `rows` rows (P's and dP's ld apart, row r's key mask at ok + r * ok_ld); 0
// at masked keys, whose dP is selected away first. A pass at a time, as
// softmax_rows; `scratch` holds nk values and `deltas` `rows`.
template <class T>
inline __attribute__((always_inline)) void softmax_backward_rows(const T* __restrict p, T* __restrict dp,
                                                                 int64_t rows, int64_t ld,
                                                                 const uint8_t* __restrict ok, int64_t ok_ld,
                                                                 int64_t nk, T scale, T* __restrict scratch,
                                                                 T* __restrict deltas) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* pr = p + r * ld;
    T* dr = dp + r * ld;
    const uint8_t* keep = ok + r * ok_ld;
    for (int64_t i = 0; i < nk; ++i) {
      dr[i] = keep[i] ? dr[i] : T(0);
      scratch[i] = pr[i] * dr[i];
    }
    deltas[r] = row_sum(scratch, nk);
  }
  for (int64_t r = 0; r < rows; ++r) {
    const T* pr = p + r * ld;
    T* dr = dp + r * ld;
    const uint8_t* keep = ok + r * ok_ld;
    const T delta = deltas[r];
    for (int64_t i = 0; i < nk; ++i) dr[i] = keep[i] ? scale * pr[i] * (dr[i] - delta) : T(0);
  }
}

}  // namespace attn
