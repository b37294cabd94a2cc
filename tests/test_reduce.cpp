// Forward values of the reductions, their layouts, and their extremes.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "attn/engine/error.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/ops/view/view.h"
#include "thread_count.h"

namespace attn {
namespace {

Tensor iota_tensor(const Shape& s, DType dt) {
  Tensor t = empty(s, dt);
  for (int64_t i = 0; i < t.numel(); ++i) write_element(t, i, static_cast<double>(i));
  return t;
}

TEST(Reduce, SumOverEachLayout) {
  Tensor x = iota_tensor({2, 3, 4}, DType::F64);
  EXPECT_EQ(sum(x, {2}).to_vector(), (std::vector<double>{6, 22, 38, 54, 70, 86}));            // rows
  EXPECT_EQ(sum(x, {0}).to_vector()[0], 12);                                                   // columns
  EXPECT_EQ(sum(x, {0, 2}, true).shape(), (Shape{1, 3, 1}));                                  // interleaved
  EXPECT_EQ(sum(x, {0, 2}, true).to_vector(), (std::vector<double>{60, 92, 124}));
  EXPECT_EQ(sum(x).item(), 276);
  // Strided and contiguous reductions add in different orders; the values are
  // small integers, whose float64 sums are exact in any order.
  EXPECT_EQ(sum(transpose(x, 0, 2), {0}).to_vector(), transpose(sum(x, {2}), 0, 1).to_vector());
  EXPECT_EQ(mean(x, {-1}).to_vector()[0], 1.5);
}

// A middle block of reduced axes runs the column kernel on x's own layout
// (outer * inner columns split across threads, four rows per pass): every
// column against its own sum. Integer values: exact in any order.
TEST(Reduce, SumOverAMiddleBlockMatchesEachColumn) {
  const int64_t B = 5, n = 37, d = 301;  // n not a multiple of 4; d spans thread ranges
  for (DType dt : {DType::F64, DType::F32}) {
    Tensor x = empty({B, n, d}, dt);
    for (int64_t i = 0; i < x.numel(); ++i) write_element(x, i, static_cast<double>((i * 7) % 23) - 11);
    Tensor s = sum(x, {1});
    ASSERT_EQ(s.shape(), (Shape{B, d}));
    for (int64_t b = 0; b < B; ++b)
      for (int64_t f = 0; f < d; ++f) {
        double want = 0;
        for (int64_t j = 0; j < n; ++j) want += x.at({b, j, f});
        ASSERT_EQ(s.at({b, f}), want) << dtype_name(dt) << " column " << b << ", " << f;
      }
    Tensor blocks = sum(reshape(x, {B, n, 1, d}), {1, 2}, true);
    EXPECT_EQ(blocks.shape(), (Shape{B, 1, 1, d}));
    EXPECT_EQ(blocks.to_vector(), s.to_vector());
  }
}

// Reduced axes in separate blocks are summed one block per pass; every
// pattern of blocks must give each output its own elements' sum (integer
// data, so every order of addition is exact).
TEST(Reduce, SumOverSeparateBlocksOfAxesMatchesTheDefinition) {
  const Shape shape{3, 4, 5, 2, 6};
  const std::vector<std::vector<int64_t>> patterns = {{0, 2}, {1, 3}, {0, 2, 4}, {0, 1, 3}, {1, 4}, {0, 4}};
  for (DType dt : {DType::F64, DType::F32}) {
    Tensor x = empty(shape, dt);
    for (int64_t i = 0; i < x.numel(); ++i) write_element(x, i, static_cast<double>((i * 11) % 29) - 14);
    for (const std::vector<int64_t>& axes : patterns) {
      Tensor s = sum(x, axes, true);
      std::vector<double> want(static_cast<size_t>(s.numel()), 0.0);
      const std::vector<double> xv = x.to_vector();
      std::vector<int64_t> idx(shape.size(), 0);
      for (int64_t i = 0; i < x.numel(); ++i) {
        int64_t rest = i, out = 0;
        for (int64_t a = static_cast<int64_t>(shape.size()) - 1; a >= 0; --a) {
          idx[a] = rest % shape[a];
          rest /= shape[a];
        }
        for (size_t a = 0; a < shape.size(); ++a) out = out * s.shape()[a] + (s.shape()[a] == 1 ? 0 : idx[a]);
        want[static_cast<size_t>(out)] += xv[static_cast<size_t>(i)];
      }
      EXPECT_EQ(s.to_vector(), want) << dtype_name(dt) << " axes " << axes.size() << " starting " << axes[0];
    }
  }
}

TEST(Reduce, Float32SumOfManyValuesIsAccurate) {
  const int64_t n = 1 << 20;
  Tensor x = full({n}, 0.1, DType::F32);
  EXPECT_NEAR(sum(x).item(), 0.1f * n, 0.1f * n * 1e-5);
  Tensor big = full({64, n / 64}, 1.0, DType::F32);
  Tensor cols = sum(big, {0});
  EXPECT_EQ(cols.at({5}), 64);
}

// A whole-tensor sum of several 2^16-element chunks (summed on all threads,
// the chunks' partials added in order): on one, two and three threads,
// within the double sums' bound of a float64 reference, and the same bits
// when the same call runs twice.
TEST(Reduce, LongRowSumIsAccurateAndDeterministicOnEveryThreadCount) {
  const int64_t n = 5 * (int64_t{1} << 16) + 123;
  for (DType dt : {DType::F32, DType::F64}) {
    Tensor x = empty({n}, dt);
    double exact = 0, magnitude = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double v = (i % 3 ? 0.25 : -0.5) * static_cast<double>(i % 1009);  // exact in float32
      write_element(x, i, v);
      exact += v;
      magnitude += std::fabs(v);
    }
    const double bound = 2.0 * static_cast<double>(n) * std::ldexp(1.0, -53) * magnitude;
    for (int threads : {1, 2, 3}) {
      SCOPED_TRACE(std::string(dtype_name(dt)) + ", " + std::to_string(threads) + " threads");
      ThreadCount count(threads);
      const double whole = sum(x).item();
      const double row = sum(reshape(x, {1, n}), {1}).item();  // one row of a [1, n] matrix: the same path
      EXPECT_NEAR(whole, exact, dt == DType::F32 ? std::fabs(exact) * 1e-7 + bound : bound);
      EXPECT_NE(whole, 0.0);
      EXPECT_EQ(row, whole) << "the same path, run twice";
      EXPECT_EQ(sum(x).item(), whole) << "the same call, run twice";
    }
  }
}

// squared_norm against a float64 sum of squares: 2^16-element rows, a tail,
// a transposed view, float32 values whose squares float32 could not hold,
// and an empty tensor. Bound: the reference's and the kernel's double sums
// of n positive terms are each within n u_64 of the exact value.
TEST(Reduce, SquaredNormSumsEverySquareInDouble) {
  const int64_t rows = 3, cols = (int64_t{1} << 16) + 7;  // 3 whole 2^16 rows' worth, then a tail
  for (DType dt : {DType::F32, DType::F64}) {
    SCOPED_TRACE(dtype_name(dt));
    Tensor x = empty({rows, cols}, dt);
    double exact = 0;
    for (int64_t i = 0; i < x.numel(); ++i) {
      // Exact in float32: multiples of 1/8 up to about 16, signs alternating.
      const double v = (i % 2 ? -0.125 : 0.125) * static_cast<double>(i % 127 + (i >> 16));
      write_element(x, i, v);
      exact += v * v;
    }
    const double bound = 2.0 * static_cast<double>(x.numel()) * std::ldexp(1.0, -53) * exact;
    Tensor q = squared_norm(x);
    EXPECT_EQ(q.dtype(), DType::F64);
    EXPECT_EQ(q.dim(), 0);
    EXPECT_NEAR(q.item(), exact, bound);
    EXPECT_NEAR(squared_norm(transpose(x, 0, 1)).item(), exact, bound);  // a view: copied contiguous first
    EXPECT_EQ(squared_norm(x).item(), q.item());                        // one path run twice: the same bits
  }
  // 2^70 squared is 2^140: beyond float32's range, not beyond double's.
  Tensor huge = full({5}, std::ldexp(1.0, 70), DType::F32);
  EXPECT_EQ(squared_norm(huge).item(), 5 * std::ldexp(1.0, 140));
  EXPECT_EQ(squared_norm(empty({0, 3}, DType::F32)).item(), 0.0);
  EXPECT_THROW(squared_norm(from_vector({1, 2}, {2}, DType::I64)), Error);
}

TEST(Reduce, MaxAndArgmax) {
  Tensor x = from_vector({3, 9, 1, 7, 2, 8}, {2, 3}, DType::F32);
  EXPECT_EQ(max(x, {1}).to_vector(), (std::vector<double>{9, 8}));
  EXPECT_EQ(max(x, {0}).to_vector(), (std::vector<double>{7, 9, 8}));
  EXPECT_EQ(max(x).item(), 9);
  EXPECT_EQ(argmax(x, 1).to_vector(), (std::vector<double>{1, 2}));
  EXPECT_EQ(argmax(x, 0, true).shape(), (Shape{1, 3}));
}

TEST(Reduce, MaxGradientGoesToOneArgmax) {
  Tensor x = from_vector({1, 5, 5, 2}, {4}, DType::F64).set_requires_grad(true);
  max(x).backward();
  EXPECT_EQ(x.grad().to_vector(), (std::vector<double>{0, 1, 0, 0}));
}

TEST(Reduce, LogSumExpIsStableAndHandlesAllMinusInfinity) {
  const double inf = std::numeric_limits<double>::infinity();
  Tensor x = from_vector({1000, 1000, -inf, -inf}, {2, 2}, DType::F64);
  Tensor l = logsumexp(x, {1});
  EXPECT_NEAR(l.at({0}), 1000 + std::log(2.0), 1e-12);
  EXPECT_EQ(l.at({1}), -inf);
  Tensor f = from_vector({1000, 1000}, {2}, DType::F32);
  EXPECT_NEAR(logsumexp(f).item(), 1000 + std::log(2.0), 1e-3);
}

TEST(Reduce, SumToUndoesBroadcasting) {
  Tensor g = iota_tensor({2, 3, 4}, DType::F64);
  Tensor s = sum_to(g, {3, 1});
  EXPECT_EQ(s.shape(), (Shape{3, 1}));
  EXPECT_EQ(s.at({0, 0}), 0 + 1 + 2 + 3 + 12 + 13 + 14 + 15);
}

}  // namespace
}  // namespace attn
