// The AVX-512 copies of a head's rows into and out of a panel, straight and
// transposed (ops/cpu/panel_copies_avx512.h), against the element-by-element
// definition: every entry they must write, zeros for rows selected out (NaN
// there included), and nothing outside rows x d touched. Skips where the
// CPU has no AVX-512F.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "attn/ops/cpu/sgemm_avx512.h"
#include "attn/ops/cpu/head_panels.h"
#include "attn/ops/cpu/panel_copies_avx512.h"
#include "attn/ops/cpu/panel_product.h"

namespace attn {
namespace {

TEST(TransposeAvx512, RowsBecomeColumnsKeptRowsOnlyAndNothingElseTouched) {
  if (!sgemm_avx512_available()) GTEST_SKIP() << "this CPU has no AVX-512F: the transposed copy is not used here";
  std::mt19937 gen(3);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  // rows and d below, at and above the 16-lane blocks; a row stride wider than d.
  for (int64_t rows : {int64_t{5}, int64_t{16}, int64_t{50}}) {
    for (int64_t d : {int64_t{7}, int64_t{30}, int64_t{33}}) {
      SCOPED_TRACE("rows " + std::to_string(rows) + ", d " + std::to_string(d));
      const int64_t stride = d + 5, ld = rows + 9;
      std::vector<float> x(static_cast<size_t>(rows * stride));
      for (float& v : x) v = u(gen);
      std::vector<uint8_t> keep(static_cast<size_t>(rows));
      for (int64_t r = 0; r < rows; ++r) keep[r] = r % 3 != 1;
      x[1 * stride] = std::numeric_limits<float>::quiet_NaN();  // row 1 is selected out
      const float sentinel = 12345.0f;
      for (const uint8_t* mask : {static_cast<const uint8_t*>(nullptr), static_cast<const uint8_t*>(keep.data())}) {
        std::vector<float> panel(static_cast<size_t>((d + 3) * ld), sentinel);
        transpose_rows_avx512(x.data(), stride, rows, d, mask, panel.data(), ld);
        for (int64_t l = 0; l < d + 3; ++l)
          for (int64_t r = 0; r < ld; ++r) {
            const float got = panel[l * ld + r];
            if (l >= d || r >= rows) {
              ASSERT_EQ(got, sentinel) << "touched (" << l << ", " << r << ")";
            } else if (mask && !mask[r]) {
              ASSERT_EQ(got, 0.0f) << "selected-out row " << r << ", feature " << l;
            } else if (r == 1 && l == 0) {
              ASSERT_TRUE(std::isnan(got));
            } else {
              ASSERT_EQ(got, x[r * stride + l]) << "row " << r << ", feature " << l;
            }
          }
      }
    }
  }
}

// Rows of random values `stride` apart, and a keep mask that selects out
// every third row from row 1; row 1 holds a NaN, which must not be copied.
struct SourceRows {
  std::vector<float> values;
  std::vector<uint8_t> keep;
};
SourceRows source_rows(int64_t rows, int64_t stride, std::mt19937& gen) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  SourceRows s;
  s.values.resize(static_cast<size_t>(rows * stride));
  for (float& v : s.values) v = u(gen);
  s.keep.resize(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) s.keep[static_cast<size_t>(r)] = r % 3 != 1;
  s.values[static_cast<size_t>(stride + 2)] = std::numeric_limits<float>::quiet_NaN();
  return s;
}

TEST(CopyRowsAvx512, RowsAreCopiedKeptRowsOnlyAndNothingElseTouched) {
  if (!sgemm_avx512_available()) GTEST_SKIP() << "this CPU has no AVX-512F: the row copy is not used here";
  std::mt19937 gen(4);
  for (int64_t rows : {int64_t{3}, int64_t{64}}) {
    for (int64_t d : {int64_t{7}, int64_t{16}, int64_t{30}, int64_t{33}}) {
      SCOPED_TRACE("rows " + std::to_string(rows) + ", d " + std::to_string(d));
      const int64_t src_stride = d + 11, dst_stride = d + 5;
      const SourceRows source = source_rows(rows, src_stride, gen);
      const std::vector<float>& src = source.values;
      const std::vector<uint8_t>& keep = source.keep;
      const float sentinel = -777.0f;
      for (const uint8_t* mask : {static_cast<const uint8_t*>(nullptr), static_cast<const uint8_t*>(keep.data())}) {
        std::vector<float> dst(static_cast<size_t>((rows + 1) * dst_stride), sentinel);
        copy_rows_avx512(src.data(), src_stride, rows, d, mask, dst.data(), dst_stride);
        for (int64_t r = 0; r < rows + 1; ++r)
          for (int64_t l = 0; l < dst_stride; ++l) {
            const float got = dst[r * dst_stride + l];
            if (r >= rows || l >= d) {
              ASSERT_EQ(got, sentinel) << "touched (" << r << ", " << l << ")";
            } else if (mask && !mask[r]) {
              ASSERT_EQ(got, 0.0f) << "selected-out row " << r;
            } else if (r == 1 && l == 2) {
              ASSERT_TRUE(std::isnan(got));
            } else {
              ASSERT_EQ(got, src[r * src_stride + l]) << "row " << r << ", entry " << l;
            }
          }
      }
    }
  }
}

// Into a panel (64-byte aligned, rows a multiple of 16 floats): each row's
// first d entries are the source's (0 in a selected-out row), the rest of
// its first round_up(d, 16) entries become 0, and nothing else is touched.
TEST(CopyRowsAvx512, RowsIntoAPanelAreWholeVectorsPaddedWithZeros) {
  if (!sgemm_avx512_available()) GTEST_SKIP() << "this CPU has no AVX-512F: the row copy is not used here";
  std::mt19937 gen(5);
  for (int64_t rows : {int64_t{3}, int64_t{64}}) {
    for (int64_t d : {int64_t{7}, int64_t{16}, int64_t{30}, int64_t{33}}) {
      SCOPED_TRACE("rows " + std::to_string(rows) + ", d " + std::to_string(d));
      const int64_t src_stride = d + 11, ld = round_up(d, 32), whole = round_up(d, 16);
      const SourceRows source = source_rows(rows, src_stride, gen);
      const std::vector<float>& src = source.values;
      const std::vector<uint8_t>& keep = source.keep;
      const float sentinel = -777.0f;
      for (const uint8_t* mask : {static_cast<const uint8_t*>(nullptr), static_cast<const uint8_t*>(keep.data())}) {
        PanelBuffer<float> panel(static_cast<size_t>((rows + 1) * ld), sentinel);
        ASSERT_EQ(reinterpret_cast<uintptr_t>(panel.data()) % 64, 0u) << "a PanelBuffer is 64-byte aligned";
        copy_rows_to_panel_avx512(src.data(), src_stride, rows, d, mask, panel.data(), ld);
        for (int64_t r = 0; r < rows + 1; ++r)
          for (int64_t l = 0; l < ld; ++l) {
            const float got = panel[static_cast<size_t>(r * ld + l)];
            if (r >= rows || l >= whole) {
              ASSERT_EQ(got, sentinel) << "touched (" << r << ", " << l << ")";
            } else if (l >= d || (mask && !mask[r])) {
              ASSERT_EQ(got, 0.0f) << "(" << r << ", " << l << ") is not zero";
            } else if (r == 1 && l == 2) {
              ASSERT_TRUE(std::isnan(got));
            } else {
              ASSERT_EQ(got, src[r * src_stride + l]) << "row " << r << ", entry " << l;
            }
          }
      }
    }
  }
}

}  // namespace
}  // namespace attn
