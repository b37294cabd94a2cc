// AVX-512 float32 copies between one attention head's rows and the per-head
// kernels' panels (ops/cpu/head_panels.h): straight and transposed, each one call
// per head instead of a memmove or a scattered scalar store per row; and the
// 16 x 16 register transpose they share with the GEMM's packing
// (ops/cpu/sgemm_avx512.cpp). Callable only where the CPU has AVX-512F
// (sgemm_avx512_available()).
#pragma once
#include <immintrin.h>

#include <cstdint>

namespace attn {

// The mask of the first `count` of 16 lanes (count may be <= 0 or >= 16).
inline __mmask16 first_lanes(int64_t count) {
  return count >= 16 ? __mmask16(0xFFFF) : count <= 0 ? __mmask16(0) : __mmask16((1u << count) - 1);
}

// GCC 12 warns about the placeholder operand (_mm512_undefined_ps) inside its
// own unpack and shuffle intrinsics wherever they are inlined; it is never read.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
// rows[i] lane j -> rows[j] lane i. Within each 128-bit lane, two rounds of
// unpacking gather four rows' values of one column; then the 128-bit lanes
// are transposed across four registers.
__attribute__((target("avx512f"))) inline void transpose_16x16(__m512 rows[16]) {
  __m512 pairs[16], quads[16];
  for (int g = 0; g < 8; ++g) {
    pairs[2 * g] = _mm512_unpacklo_ps(rows[2 * g], rows[2 * g + 1]);      // columns 4l, 4l+1 of rows 2g, 2g+1
    pairs[2 * g + 1] = _mm512_unpackhi_ps(rows[2 * g], rows[2 * g + 1]);  // columns 4l+2, 4l+3
  }
  for (int g = 0; g < 4; ++g) {  // quads[4g + e], 128-bit lane l: rows 4g..4g+3 of column 4l + e
    const __m512d lo0 = _mm512_castps_pd(pairs[4 * g]), lo1 = _mm512_castps_pd(pairs[4 * g + 2]);
    const __m512d hi0 = _mm512_castps_pd(pairs[4 * g + 1]), hi1 = _mm512_castps_pd(pairs[4 * g + 3]);
    quads[4 * g] = _mm512_castpd_ps(_mm512_unpacklo_pd(lo0, lo1));
    quads[4 * g + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(lo0, lo1));
    quads[4 * g + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(hi0, hi1));
    quads[4 * g + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(hi0, hi1));
  }
  for (int e = 0; e < 4; ++e) {
    const __m512 v0 = _mm512_shuffle_f32x4(quads[e], quads[4 + e], 0x44);  // lanes a0 a1 b0 b1
    const __m512 v1 = _mm512_shuffle_f32x4(quads[e], quads[4 + e], 0xEE);  // a2 a3 b2 b3
    const __m512 v2 = _mm512_shuffle_f32x4(quads[8 + e], quads[12 + e], 0x44);
    const __m512 v3 = _mm512_shuffle_f32x4(quads[8 + e], quads[12 + e], 0xEE);
    rows[e] = _mm512_shuffle_f32x4(v0, v2, 0x88);       // column e: lanes a0 b0 c0 d0
    rows[4 + e] = _mm512_shuffle_f32x4(v0, v2, 0xDD);   // column 4 + e
    rows[8 + e] = _mm512_shuffle_f32x4(v1, v3, 0x88);   // column 8 + e
    rows[12 + e] = _mm512_shuffle_f32x4(v1, v3, 0xDD);  // column 12 + e
  }
}
#pragma GCC diagnostic pop

// panel[l * ld + r] = x[r * row_stride + l] for r < rows and l < d, or 0 for
// a row with keep[r] == 0 (a key selected out, whatever it holds; keep may
// be null). Only those entries are written: 16 x 16 blocks through
// registers instead of one scattered scalar store per element (a quarter of
// the attention forward's time at d = 30).
void transpose_rows_avx512(const float* x, int64_t row_stride, int64_t rows, int64_t d, const uint8_t* keep,
                           float* panel, int64_t ld);

// The same into a panel whose rows are whole vectors: panel (64-byte
// aligned) row r's first round_up(d, 16) floats = src row r's d values,
// then zeros (ld a multiple of 16, at least round_up(d, 16)). Whole aligned
// stores instead of masked ones, which straddle cache lines at d = 30 and
// were most of the attention's copying.
void copy_rows_to_panel_avx512(const float* src, int64_t src_stride, int64_t rows, int64_t d, const uint8_t* keep,
                               float* panel, int64_t ld);

// dst[r * dst_stride + l] = src[r * src_stride + l] for r < rows and l < d,
// or 0 for a row with keep[r] == 0 (keep may be null); nothing past d in a
// row is touched. At d = 30 a memmove per row was a sixth of the
// Transformer's attention forward (rdtsc per phase).
void copy_rows_avx512(const float* src, int64_t src_stride, int64_t rows, int64_t d, const uint8_t* keep, float* dst,
                      int64_t dst_stride);

}  // namespace attn
