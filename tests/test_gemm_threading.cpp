// The CPU GEMM's per-call threading choice (ops/cpu/gemm_threads.h): which calls
// go to OpenBLAS's threads and which are split over the engine's, and that
// every branch computes the product to within rounding of the exact value,
// for both dtypes, transposed and strided operands, the fused linear layer,
// calls made inside a parallel region, and changed thread counts.
#include <cblas.h>
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "attn/engine/error.h"
#include "attn/engine/random.h"
#include "attn/ops/cpu/gemm_threads.h"
#include "attn/ops/matmul/matmul.h"
#include "attn/ops/matmul/matmul_fused.h"
#include "attn/ops/view/view.h"
#include "thread_count.h"

namespace attn {
namespace {

Tensor uniform(const Shape& shape, Generator& gen, DType dtype) { return rand_uniform(shape, -1.0, 1.0, gen, dtype); }

// A [rows, cols] view of fresh [cols, rows] storage.
Tensor transposed(const Shape& shape, Generator& gen, DType dtype) {
  Shape base = shape;
  std::swap(base[base.size() - 1], base[base.size() - 2]);
  return transpose(uniform(base, gen, dtype), -1, -2);
}

// got = a @ b (+ bias per row) for batched [batch, m, k] @ [batch, k, n] (or
// 2-D). Whatever the blocking and summation order, each computed entry is
// within gamma_k (|A||B| + |bias|) of the exact value (Higham, Accuracy and
// Stability, eq. 3.13; gamma_k = k u / (1 - k u), u the unit roundoff of the
// dtype); the float64 loop here is itself within gamma_k(2^-53) of it, so the
// two may differ by the sum of both bounds.
// With `relu` the exact value is relu'd too (relu moves no entry further
// from it) and every entry must be >= +0.
void expect_within_rounding(const Tensor& got, const Tensor& a, const Tensor& b, const Tensor& bias = Tensor(),
                            bool relu = false) {
  const std::vector<double> av = a.to_vector(), bv = b.to_vector(), cv = got.to_vector();
  const std::vector<double> biasv = bias.defined() ? bias.to_vector() : std::vector<double>();
  const int64_t m = a.size(-2), k = a.size(-1), n = b.size(-1);
  const int64_t batch = static_cast<int64_t>(cv.size()) / (m * n);
  ASSERT_EQ(static_cast<int64_t>(cv.size()), batch * m * n);
  const double u = got.dtype() == DType::F32 ? std::numeric_limits<float>::epsilon() / 2
                                             : std::numeric_limits<double>::epsilon() / 2;
  const double u64 = std::numeric_limits<double>::epsilon() / 2;
  const double kk = static_cast<double>(k + (bias.defined() ? 1 : 0));
  const double gamma = kk * u / (1 - kk * u) + kk * u64 / (1 - kk * u64);
  int64_t checked_nonzero = 0;
  for (int64_t e = 0; e < batch; ++e)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double exact = biasv.empty() ? 0 : biasv[j], magnitude = biasv.empty() ? 0 : std::abs(biasv[j]);
        for (int64_t p = 0; p < k; ++p) {
          const double x = av[(e * m + i) * k + p], y = bv[(e * k + p) * n + j];
          exact += x * y;
          magnitude += std::abs(x * y);
        }
        if (relu) exact = std::max(exact, 0.0);
        const double c = cv[(e * m + i) * n + j];
        if (relu) {
          ASSERT_FALSE(c < 0 || std::signbit(c)) << "entry (" << e << ", " << i << ", " << j << "): " << c;
        }
        checked_nonzero += c != 0;
        ASSERT_LE(std::abs(c - exact), gamma * magnitude)
            << "entry (" << e << ", " << i << ", " << j << "): got " << c << ", exact " << exact;
      }
  EXPECT_GT(checked_nonzero, 0);
}

TEST(GemmThreading, FewLargeSquarishProductsGoToBlasTheRestAreSplit) {
  const int64_t big = 512;  // 512^3 = 2^27 multiply-adds: the threshold exactly
  EXPECT_EQ(choose_gemm_threading(1, big, big, big, 2), GemmThreading::blas_threads);
  EXPECT_EQ(choose_gemm_threading(1, big - 1, big, big, 2), GemmThreading::engine_split);
  EXPECT_EQ(choose_gemm_threading(3, big, big, big, 4), GemmThreading::blas_threads);
  EXPECT_EQ(choose_gemm_threading(2, big, big, big, 2), GemmThreading::engine_split);
  EXPECT_EQ(choose_gemm_threading(512, 64, 64, 64, 2), GemmThreading::engine_split);
  // Tall or deep products (a linear layer over 64 x 64 tokens, its weight
  // gradient) stay on the engine's threads however large.
  EXPECT_EQ(choose_gemm_threading(1, 4096, 300, 300, 2), GemmThreading::engine_split);
  EXPECT_EQ(choose_gemm_threading(1, 300, 300, 4096, 2), GemmThreading::engine_split_depth);
  // Reduction slices: one product, under 256 rows per thread, at least 512 of k per thread.
  EXPECT_EQ(choose_gemm_threading(1, 511, 200, 1024, 2), GemmThreading::engine_split_depth);
  EXPECT_EQ(choose_gemm_threading(1, 512, 200, 1024, 2), GemmThreading::engine_split);
  EXPECT_EQ(choose_gemm_threading(1, 300, 300, 1023, 2), GemmThreading::engine_split);
  EXPECT_EQ(choose_gemm_threading(1, 300, 300, 2048, 4), GemmThreading::engine_split_depth);
  EXPECT_EQ(choose_gemm_threading(2, 300, 300, 4096, 2), GemmThreading::engine_split);   // one product per thread
  EXPECT_EQ(choose_gemm_threading(1, 2048, 512, 1024, 2), GemmThreading::blas_threads);  // aspect 4 exactly
  // One thread (or a call from inside a parallel region) and tiny work: serial.
  EXPECT_EQ(choose_gemm_threading(1, big, big, big, 1), GemmThreading::serial);
  EXPECT_EQ(choose_gemm_threading(4, 8, 8, 8, 2), GemmThreading::serial);
}

// Each case names the branch it is meant to take, so a change of threshold
// that moves it to the other branch fails here rather than silently testing
// the same branch twice.
struct ProductCase {
  Shape a, b;
  bool transpose_a, transpose_b;
  GemmThreading expected;
};

TEST(GemmThreading, EveryBranchIsWithinRoundingForBothDtypesAndLayouts) {
  ThreadCount threads(2);
  const ProductCase cases[] = {
      {{520, 500}, {500, 530}, false, false, GemmThreading::blas_threads},
      {{520, 500}, {500, 530}, true, true, GemmThreading::blas_threads},
      {{4, 130, 140}, {4, 140, 150}, false, false, GemmThreading::engine_split},
      {{3, 130, 140}, {3, 140, 150}, true, false, GemmThreading::engine_split},  // row blocks: 3 on 2 threads
      {{40, 1030}, {1030, 50}, true, false, GemmThreading::engine_split_depth},  // a weight gradient's layout
      {{40, 1030}, {1030, 50}, false, true, GemmThreading::engine_split_depth},
      {{5, 6}, {6, 7}, false, true, GemmThreading::serial},
  };
  Generator gen(15);
  for (DType dt : {DType::F32, DType::F64}) {
    for (const ProductCase& c : cases) {
      const Tensor a = c.transpose_a ? transposed(c.a, gen, dt) : uniform(c.a, gen, dt);
      const Tensor b = c.transpose_b ? transposed(c.b, gen, dt) : uniform(c.b, gen, dt);
      const int64_t batch = a.dim() == 3 ? a.size(0) : 1;
      ASSERT_EQ(choose_gemm_threading(batch, a.size(-2), b.size(-1), a.size(-1), 2), c.expected);
      SCOPED_TRACE(std::string(dtype_name(dt)) + " " + shape_str(a.shape()) + " @ " + shape_str(b.shape()));
      expect_within_rounding(matmul(a, b), a, b);
    }
    // Strided rows: a column slice of a wider matrix keeps its leading stride.
    const Tensor wide = narrow(uniform({520, 600}, gen, dt), 1, 50, 520);
    const Tensor tall = uniform({520, 510}, gen, dt);
    ASSERT_EQ(choose_gemm_threading(1, 520, 510, 520, 2), GemmThreading::blas_threads);
    expect_within_rounding(matmul(wide, tall), wide, tall);
  }
}

TEST(GemmThreading, OpenBlasIsSerialAgainAfterAThreadedCall) {
  ThreadCount threads(2);
  Generator gen(16);
  const Tensor a = uniform({520, 520}, gen, DType::F32), b = uniform({520, 520}, gen, DType::F32);
  ASSERT_EQ(choose_gemm_threading(1, 520, 520, 520, 2), GemmThreading::blas_threads);
  expect_within_rounding(matmul(a, b), a, b);
  // The engine's own threads do the splitting elsewhere; OpenBLAS threads
  // left on would fork inside every serial piece.
  EXPECT_EQ(openblas_get_num_threads(), 1);
}

// CTest runs each test in its own process, so this first product of the
// process goes through the buffer warm-up of engine/blas_threads.cpp.
TEST(GemmThreading, TheFirstProductWarmsOpenBlasAndLeavesItSerial) {
  ThreadCount threads(2);
  Generator gen(17);
  const Tensor a = uniform({40, 30}, gen, DType::F64), b = uniform({30, 20}, gen, DType::F64);
  expect_within_rounding(matmul(a, b), a, b);
  EXPECT_EQ(openblas_get_num_threads(), 1);
}

TEST(GemmThreading, LinearLayerTakesTheSameBranchesWithItsBias) {
  ThreadCount threads(2);
  Generator gen(17);
  for (DType dt : {DType::F32, DType::F64}) {
    // 520 x 520 x 500 is large and square; 4096 x 64 x 64 is tall; 64 rows is far below the threshold;
    // 48 rows of 1100 inputs are cut into reduction slices, the bias staying in the first.
    for (int64_t rows : {int64_t{520}, int64_t{4096}, int64_t{64}, int64_t{48}}) {
      const int64_t in = rows == 520 ? 520 : rows == 48 ? 1100 : 64, out = rows == 520 ? 500 : 64;
      const Tensor x = uniform({rows, in}, gen, dt), w = transposed({out, in}, gen, dt);
      const Tensor bias = uniform({out}, gen, dt);
      const GemmThreading expected = rows == 520  ? GemmThreading::blas_threads
                                     : rows == 48 ? GemmThreading::engine_split_depth
                                                  : GemmThreading::engine_split;
      ASSERT_EQ(choose_gemm_threading(1, rows, out, in, 2), expected);
      // linear(x, w) = x @ w^T + bias; w is a transposed view, so w^T is contiguous.
      expect_within_rounding(linear(x, w, bias), x, transpose(w, 0, 1), bias);
    }
  }
}

// linear_relu through the same branches: the engine's float32 kernel takes
// the relu as it stores the sums (after the last depth block, or after the
// reduction slices are added), float64 and OpenBLAS in a pass afterwards.
TEST(GemmThreading, LinearReluTakesTheSameBranchesWithItsBias) {
  ThreadCount threads(2);
  Generator gen(19);
  for (DType dt : {DType::F32, DType::F64}) {
    for (int64_t rows : {int64_t{520}, int64_t{4096}, int64_t{64}, int64_t{48}}) {
      const int64_t in = rows == 520 ? 520 : rows == 48 ? 1100 : 64, out = rows == 520 ? 500 : 64;
      const Tensor x = uniform({rows, in}, gen, dt), w = transposed({out, in}, gen, dt);
      const Tensor bias = uniform({out}, gen, dt);
      SCOPED_TRACE(std::string(dtype_name(dt)) + " rows " + std::to_string(rows));
      expect_within_rounding(linear_relu(x, w, bias), x, transpose(w, 0, 1), bias, true);
      expect_within_rounding(linear_relu(x, w), x, transpose(w, 0, 1), Tensor(), true);
    }
  }
}

TEST(GemmThreading, CallsFromInsideAParallelRegionStaySerialAndCorrect) {
  ThreadCount threads(2);
  Generator gen(18);
  // Large and square: outside a parallel region these would go to OpenBLAS's threads.
  ASSERT_EQ(choose_gemm_threading(1, 530, 520, 500, 2), GemmThreading::blas_threads);
  const std::vector<Tensor> as = {uniform({530, 500}, gen, DType::F64), uniform({530, 500}, gen, DType::F64)};
  const std::vector<Tensor> bs = {uniform({500, 520}, gen, DType::F64), uniform({500, 520}, gen, DType::F64)};
  std::vector<Tensor> products(2);
  int in_parallel = 0;
#pragma omp parallel num_threads(2)
  {
    const int i = omp_get_thread_num();
#pragma omp atomic
    in_parallel += omp_in_parallel() ? 1 : 0;
    // Each thread runs one whole product; a nested fork would oversubscribe.
    products[i] = matmul(as[i], bs[i]);
  }
  ASSERT_GE(in_parallel, 1);
  EXPECT_EQ(openblas_get_num_threads(), 1);
  for (size_t i = 0; i < 2; ++i) expect_within_rounding(products[i], as[i], bs[i]);
}

TEST(GemmThreading, ReductionSlicesAddUpInTheSameOrderOnEveryCall) {
  ThreadCount threads(2);
  Generator gen(20);
  const Tensor a = transposed({60, 1500}, gen, DType::F32), b = uniform({1500, 70}, gen, DType::F32);
  ASSERT_EQ(choose_gemm_threading(1, 60, 70, 1500, 2), GemmThreading::engine_split_depth);
  const Tensor first = matmul(a, b), second = matmul(a, b);
  // One path run twice: whichever thread takes a slice, the partials are added in slice order.
  EXPECT_EQ(first.to_vector(), second.to_vector());
  expect_within_rounding(first, a, b);
}

TEST(GemmThreading, ChangedThreadCountsKeepEveryBranchCorrect) {
  Generator gen(19);
  const Tensor a = uniform({520, 500}, gen, DType::F32), b = uniform({500, 530}, gen, DType::F32);
  const Tensor many_a = uniform({3, 130, 140}, gen, DType::F32), many_b = uniform({3, 140, 150}, gen, DType::F32);
  // Deep enough for reduction slices on up to 4 threads; 3 threads cut 2100 unevenly.
  const Tensor short_a = uniform({30, 2100}, gen, DType::F32), deep_b = uniform({2100, 20}, gen, DType::F32);
  for (int count : {3, 1, 4, 2}) {
    ThreadCount threads(count);
    SCOPED_TRACE("threads " + std::to_string(count));
    if (count > 1) {
      ASSERT_EQ(choose_gemm_threading(1, 30, 20, 2100, count), GemmThreading::engine_split_depth);
    }
    expect_within_rounding(matmul(a, b), a, b);
    expect_within_rounding(matmul(many_a, many_b), many_a, many_b);
    expect_within_rounding(matmul(short_a, deep_b), short_a, deep_b);
    EXPECT_EQ(openblas_get_num_threads(), 1);
  }
}

}  // namespace
}  // namespace attn
