#include "attn/ops/cpu/panel_copies_avx512.h"

#include <algorithm>

namespace attn {

namespace {

// Rows a head's strided copy fetches ahead of the one it copies: a head's
// rows are a fixed stride apart (every token's projections in between),
// which the hardware prefetchers do not follow, so without it each row's
// lines were a demand miss (the loads took 60% of the attention's copies).
constexpr int64_t kRowsAhead = 8;

// A row's d floats into L1, for reading or (kForWriting: a head's rows of a
// fresh output, where each store otherwise waited for its line) writing.
template <int kForWriting>
inline void prefetch_row(const float* row, int64_t d) {
  for (int64_t l = 0; l < d; l += 16) __builtin_prefetch(row + l, kForWriting, 3);
  __builtin_prefetch(row + d - 1, kForWriting, 3);
}

}  // namespace

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
__attribute__((target("avx512f"))) void transpose_rows_avx512(const float* x, int64_t row_stride, int64_t rows,
                                                              int64_t d, const uint8_t* keep, float* panel,
                                                              int64_t ld) {
  for (int64_t r0 = 0; r0 < rows; r0 += 16) {
    const __mmask16 row_lanes = first_lanes(rows - r0);
    for (int64_t l0 = 0; l0 < d; l0 += 16) {
      const __mmask16 features = first_lanes(d - l0);
      __m512 block[16];
      for (int64_t i = 0; i < 16; ++i) {
        const int64_t r = r0 + i;
        if (l0 == 0 && r + 16 < rows) prefetch_row<0>(x + (r + 16) * row_stride, d);
        const bool load = r < rows && (keep == nullptr || keep[r]);
        block[i] = load ? _mm512_maskz_loadu_ps(features, x + r * row_stride + l0) : _mm512_setzero_ps();
      }
      transpose_16x16(block);
      for (int64_t l = 0; l < std::min<int64_t>(16, d - l0); ++l)
        _mm512_mask_storeu_ps(panel + (l0 + l) * ld + r0, row_lanes, block[l]);
    }
  }
}
#pragma GCC diagnostic pop

__attribute__((target("avx512f"))) void copy_rows_to_panel_avx512(const float* src, int64_t src_stride, int64_t rows,
                                                                  int64_t d, const uint8_t* keep, float* panel,
                                                                  int64_t ld) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* from = src + r * src_stride;
    float* to = panel + r * ld;
    if (r + kRowsAhead < rows) prefetch_row<0>(from + kRowsAhead * src_stride, d);
    const bool kept = keep == nullptr || keep[r];
    for (int64_t l = 0; l < d; l += 16)
      _mm512_store_ps(to + l, kept ? _mm512_maskz_loadu_ps(first_lanes(d - l), from + l) : _mm512_setzero_ps());
  }
}

__attribute__((target("avx512f"))) void copy_rows_avx512(const float* src, int64_t src_stride, int64_t rows,
                                                         int64_t d, const uint8_t* keep, float* dst,
                                                         int64_t dst_stride) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* from = src + r * src_stride;
    float* to = dst + r * dst_stride;
    if (r + kRowsAhead < rows) prefetch_row<1>(to + kRowsAhead * dst_stride, d);
    const bool kept = keep == nullptr || keep[r];
    // Whole vectors unmasked; a masked store is only for the row's tail (a
    // masked store across two cache lines costs several plain ones).
    int64_t l = 0;
    for (; l + 16 <= d; l += 16) _mm512_storeu_ps(to + l, kept ? _mm512_loadu_ps(from + l) : _mm512_setzero_ps());
    if (l < d) {
      const __mmask16 lanes = first_lanes(d - l);
      _mm512_mask_storeu_ps(to + l, lanes, kept ? _mm512_maskz_loadu_ps(lanes, from + l) : _mm512_setzero_ps());
    }
  }
}

}  // namespace attn
