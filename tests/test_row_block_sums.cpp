// Column sums by blocks of rows (ops/cpu/row_block_sums.h) and the kernels that
// use them (sum over the rows of a matrix, relu_gradient_columns): every
// element is visited once, the sums are within the rounding of double
// accumulation, and the same bits come back whatever the thread count
// (the blocks depend on the problem's size only).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "attn/engine/random.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/ops/relu_gradient_columns/relu_gradient_columns.h"
#include "attn/ops/cpu/row_block_sums.h"

namespace attn {
namespace {

// Narrow (several row blocks), one block, and wide (few rows: column chunks
// on two or more threads) matrices, with ragged last blocks and chunks.
struct Size {
  int64_t rows, cols;
};
const Size kSizes[] = {{700, 300}, {300, 70}, {5, 4100}, {130, 2050}, {1, 1}};

TEST(RowBlockSums, EveryElementIsVisitedOnceIntoItsBlocksZeroedSums) {
  for (const Size s : kSizes) {
    SCOPED_TRACE(std::to_string(s.rows) + " x " + std::to_string(s.cols));
    std::vector<int> visits(static_cast<size_t>(s.rows * s.cols), 0);
    std::vector<double> totals(static_cast<size_t>(s.cols), -1.0);
    column_totals_by_blocks(s.rows, s.cols, totals.data(), [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1,
                                                               double* acc) {
      for (int64_t j = c0; j < c1; ++j) ASSERT_EQ(acc[j - c0], 0.0) << "column " << j << " starts non-zero";
      for (int64_t i = r0; i < r1; ++i)
        for (int64_t j = c0; j < c1; ++j) {
          ++visits[static_cast<size_t>(i * s.cols + j)];  // each (i, j) belongs to one block: no race
          acc[j - c0] += static_cast<double>(i + 1);
        }
    });
    for (size_t e = 0; e < visits.size(); ++e) ASSERT_EQ(visits[e], 1) << "element " << e;
    const double want = static_cast<double>(s.rows) * static_cast<double>(s.rows + 1) / 2;  // exact in double
    for (int64_t j = 0; j < s.cols; ++j) ASSERT_EQ(totals[static_cast<size_t>(j)], want) << "column " << j;
  }
}

#ifdef _OPENMP
// Runs f with `threads` OpenMP threads, then restores the count.
template <class F>
std::vector<double> with_threads(int threads, const F& f) {
  const int saved = omp_get_max_threads();
  omp_set_num_threads(threads);
  std::vector<double> out = f();
  omp_set_num_threads(saved);
  return out;
}

// float64 values: double sums of float32 values are mostly exact in any
// order, so only float64 shows a change of order.
TEST(RowBlockSums, ColumnSumsHaveTheSameBitsOnOneTwoAndThreeThreads) {
  for (const Size s : kSizes) {
    SCOPED_TRACE(std::to_string(s.rows) + " x " + std::to_string(s.cols));
    Generator gen(31);
    const Tensor x = rand_uniform({s.rows, s.cols}, -1.0, 1.0, gen, DType::F64);
    const Tensor y = rand_uniform({s.rows, s.cols}, -1.0, 1.0, gen, DType::F64);
    const auto sums = [&] { return sum(x, {0}).to_vector(); };
    const auto relu_sums = [&] { return relu_gradient_columns(x, y).column_sums.to_vector(); };
    const std::vector<double> one = with_threads(1, sums), one_relu = with_threads(1, relu_sums);
    for (int threads : {2, 3}) {
      EXPECT_EQ(with_threads(threads, sums), one) << threads << " threads";
      EXPECT_EQ(with_threads(threads, relu_sums), one_relu) << threads << " threads";
    }
  }
}
#endif

// sum over rows and relu_gradient_columns against a float64 reference, in
// both dtypes: double accumulation, then one rounding to the dtype.
TEST(RowBlockSums, ColumnSumsAreWithinTheRoundingOfDoubleAccumulation) {
  for (DType dt : {DType::F32, DType::F64}) {
    for (const Size s : kSizes) {
      SCOPED_TRACE(std::string(dtype_name(dt)) + " " + std::to_string(s.rows) + " x " + std::to_string(s.cols));
      Generator gen(32);
      const Tensor x = rand_uniform({s.rows, s.cols}, -1.0, 1.0, gen, dt);
      const Tensor y = rand_uniform({s.rows, s.cols}, -1.0, 1.0, gen, dt);
      const std::vector<double> xs = x.to_vector(), ys = y.to_vector();
      const std::vector<double> sums = sum(x, {0}).to_vector();
      const std::vector<double> relu_sums = relu_gradient_columns(x, y).column_sums.to_vector();
      const double u = dt == DType::F32 ? std::numeric_limits<float>::epsilon() / 2
                                        : std::numeric_limits<double>::epsilon() / 2;
      const double u64 = std::numeric_limits<double>::epsilon() / 2;
      int64_t nonzero = 0;
      for (int64_t j = 0; j < s.cols; ++j) {
        double exact = 0, exact_relu = 0, magnitude = 0;
        for (int64_t i = 0; i < s.rows; ++i) {
          const double v = xs[static_cast<size_t>(i * s.cols + j)];
          exact += v;
          if (ys[static_cast<size_t>(i * s.cols + j)] > 0) exact_relu += v;
          magnitude += std::abs(v);
        }
        // Both the reference and the kernel add s.rows doubles (2 n u64 of
        // the magnitude), then the kernel rounds once to the dtype.
        const double bound = 2.0 * static_cast<double>(s.rows) * u64 * magnitude;
        ASSERT_NEAR(sums[static_cast<size_t>(j)], exact, u * std::abs(exact) + bound) << "column " << j;
        ASSERT_NEAR(relu_sums[static_cast<size_t>(j)], exact_relu, u * std::abs(exact_relu) + bound)
            << "column " << j;
        nonzero += sums[static_cast<size_t>(j)] != 0;
      }
      EXPECT_GT(nonzero, 0);
    }
  }
}

}  // namespace
}  // namespace attn
