// Copies between one attention head's rows (read through HeadRows, see
// ops/head_rows.h) and the zero-padded scratch panels of the per-head CPU
// kernels (dot_product_attention, window_attention), which run their
// products as panel_product blocks (ops/panel_product.h).
#pragma once
#include <algorithm>
#include <cstdint>

#include "attn/ops/head_rows.h"

namespace attn {

// Row r < rows of head (b, c) of x into panel row r + offset (the first d
// entries of it). With `keep`, a row with keep[r] == 0 becomes a zero row
// instead: a key that must not be attended is selected out of the products,
// whatever its row holds (NaN included), never weighted by zero.
template <class T>
void head_rows_to_panel(const T* x, const HeadRows& at, int64_t b, int64_t c, int64_t rows, int64_t d,
                        const uint8_t* keep, int64_t offset, T* panel, int64_t ld) {
  for (int64_t r = 0; r < rows; ++r) {
    T* dst = panel + (r + offset) * ld;
    if (keep && !keep[r]) {
      std::fill(dst, dst + d, T(0));
    } else {
      std::copy(x + at.at(b, c, r), x + at.at(b, c, r) + d, dst);
    }
  }
}

// The same rows transposed: panel[l * ld + r + offset] = x[row r][l].
template <class T>
void head_rows_to_transposed_panel(const T* x, const HeadRows& at, int64_t b, int64_t c, int64_t rows, int64_t d,
                                   const uint8_t* keep, int64_t offset, T* panel, int64_t ld) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* row = x + at.at(b, c, r);
    const bool kept = !keep || keep[r];
    for (int64_t l = 0; l < d; ++l) panel[l * ld + r + offset] = kept ? row[l] : T(0);
  }
}

// out[c * ld_out + r] = in[r * ld_in + c] for a rows x cols block.
template <class T>
void transpose_panel(const T* in, int64_t ld_in, int64_t rows, int64_t cols, T* out, int64_t ld_out) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) out[c * ld_out + r] = in[r * ld_in + c];
}

}  // namespace attn
