// The engine's AVX-512 float32 GEMM (ops/cpu/sgemm_avx512.h) against a float64
// product, over the layouts, edge sizes and betas it must handle, and the
// matmul and linear ops with it on and off (set_cpu_sgemm). On a CPU without
// AVX-512F the kernel's own tests skip and say so; the ops then run OpenBLAS
// either way.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "attn/engine/copy.h"
#include "attn/engine/random.h"
#include "attn/ops/matmul/matmul.h"
#include "attn/ops/matmul/matmul_fused.h"
#include "attn/ops/cpu/sgemm_avx512.h"
#include "attn/ops/view/view.h"

namespace attn {
namespace {

struct Case {
  bool trans_a, trans_b;
  int64_t m, n, k, lda_pad, ldb_pad, ldc_pad;
  float beta;
};

// C = op(A) op(B) + beta C0 from row-major storage as cblas reads it.
struct Product {
  std::vector<float> a, b, c0;
  int64_t lda, ldb, ldc;
};

Product make_product(const Case& t, std::mt19937& gen) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  Product p;
  const int64_t a_rows = t.trans_a ? t.k : t.m, a_cols = t.trans_a ? t.m : t.k;
  const int64_t b_rows = t.trans_b ? t.n : t.k, b_cols = t.trans_b ? t.k : t.n;
  p.lda = a_cols + t.lda_pad;
  p.ldb = b_cols + t.ldb_pad;
  p.ldc = t.n + t.ldc_pad;
  p.a.resize(static_cast<size_t>(a_rows * p.lda));
  p.b.resize(static_cast<size_t>(b_rows * p.ldb));
  p.c0.resize(static_cast<size_t>(t.m * p.ldc));
  for (float& x : p.a) x = u(gen);
  for (float& x : p.b) x = u(gen);
  for (float& x : p.c0) x = u(gen);
  return p;
}

double element_a(const Case& t, const Product& p, int64_t i, int64_t q) {
  return t.trans_a ? p.a[q * p.lda + i] : p.a[i * p.lda + q];
}
double element_b(const Case& t, const Product& p, int64_t q, int64_t j) {
  return t.trans_b ? p.b[j * p.ldb + q] : p.b[q * p.ldb + j];
}

// Each entry within gamma_(k+1) (sum |a b| + |beta c0|) of the float64 value
// (Higham, Accuracy and Stability, eq. 3.13; float32 unit roundoff, plus the
// float64 reference's own bound), whatever order the kernel sums in, with
// a bias row added and a relu taken where given; the padding between rows
// (ldc > n) is untouched.
void expect_product(const Case& t, const Product& p, const std::vector<float>& c, const float* bias = nullptr,
                    bool relu = false) {
  const double u = std::numeric_limits<float>::epsilon() / 2, u64 = std::numeric_limits<double>::epsilon() / 2;
  const double kk = static_cast<double>(t.k + 2);
  const double gamma = kk * u / (1 - kk * u) + kk * u64 / (1 - kk * u64);
  int64_t nonzero = 0;
  for (int64_t i = 0; i < t.m; ++i) {
    for (int64_t j = 0; j < t.n; ++j) {
      const double c0 = p.c0[i * p.ldc + j];
      double exact = t.beta == 0.0f ? 0.0 : t.beta * c0, magnitude = std::abs(exact);
      for (int64_t q = 0; q < t.k; ++q) {
        const double x = element_a(t, p, i, q) * element_b(t, p, q, j);
        exact += x;
        magnitude += std::abs(x);
      }
      if (bias) {
        exact += bias[j];
        magnitude += std::abs(bias[j]);
      }
      if (relu) exact = std::max(exact, 0.0);  // 1-Lipschitz: the bound carries over
      const double got = c[i * p.ldc + j];
      nonzero += got != 0;
      ASSERT_LE(std::abs(got - exact), gamma * magnitude) << "entry (" << i << ", " << j << ")";
    }
    for (int64_t j = t.n; j < p.ldc; ++j) ASSERT_EQ(c[i * p.ldc + j], p.c0[i * p.ldc + j]) << "padding touched";
  }
  if (t.k > 0 || t.beta != 0.0f) {
    EXPECT_GT(nonzero, 0);
  }
}

std::string describe(const Case& t) {
  return std::string(t.trans_a ? "A^T" : "A") + (t.trans_b ? " B^T " : " B ") + std::to_string(t.m) + "x" +
         std::to_string(t.n) + "x" + std::to_string(t.k) + " beta " + std::to_string(t.beta);
}

class SgemmAvx512 : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!sgemm_avx512_available())
      GTEST_SKIP() << "this CPU has no AVX-512F: the engine's float32 GEMM is not used here";
  }
};

TEST_F(SgemmAvx512, EveryLayoutEdgeSizeAndBetaIsWithinRoundingOfTheExactProduct) {
  // Tiles are 12 x 32, depth blocks of equal depth up to 384, row blocks 96,
  // column blocks 1536: sizes one below, at and above those, and ones that
  // leave every kind of edge.
  const Case cases[] = {
      {false, false, 12, 32, 256, 0, 0, 0, 0.0f}, {false, false, 13, 33, 257, 3, 5, 7, 0.0f},
      {true, false, 145, 31, 300, 1, 0, 2, 1.0f}, {false, true, 11, 65, 513, 0, 4, 0, 1.0f},
      {true, true, 150, 100, 40, 2, 2, 1, 0.5f},  {false, false, 1, 1, 1, 0, 0, 0, 0.0f},
      {false, true, 300, 300, 64, 0, 0, 0, 0.0f}, {true, false, 30, 1600, 20, 0, 0, 3, -2.0f},
      {false, false, 289, 45, 1, 1, 1, 1, 1.0f},  {false, true, 97, 1537, 385, 0, 0, 0, 0.0f},
      {true, true, 95, 64, 769, 0, 0, 0, 1.0f},   {false, false, 96, 20, 384, 0, 0, 0, 0.0f},
  };
  std::mt19937 gen(7);
  for (const Case& t : cases) {
    SCOPED_TRACE(describe(t));
    Product p = make_product(t, gen);
    std::vector<float> c = p.c0;
    sgemm_avx512(t.trans_a, t.trans_b, t.m, t.n, t.k, p.a.data(), p.lda, p.b.data(), p.ldb, t.beta, c.data(), p.ldc);
    expect_product(t, p, c);
  }
}

TEST_F(SgemmAvx512, BetaZeroNeverReadsC) {
  // beta = 0 overwrites C: NaN or infinity left there must not leak in (0 * NaN = NaN).
  const Case t{false, false, 20, 40, 300, 0, 0, 0, 0.0f};
  std::mt19937 gen(8);
  Product p = make_product(t, gen);
  std::vector<float> c(p.c0.size(), std::numeric_limits<float>::quiet_NaN());
  c[5] = std::numeric_limits<float>::infinity();
  sgemm_avx512(false, false, t.m, t.n, t.k, p.a.data(), p.lda, p.b.data(), p.ldb, 0.0f, c.data(), p.ldc);
  for (float x : c) ASSERT_TRUE(std::isfinite(x));
  expect_product(t, p, c);
}

TEST_F(SgemmAvx512, EmptyDepthGivesBetaTimesC) {
  const Case zero{false, false, 5, 7, 0, 0, 0, 0, 0.0f}, half{false, false, 5, 7, 0, 0, 0, 0, 0.5f};
  std::mt19937 gen(9);
  for (const Case& t : {zero, half}) {
    Product p = make_product(t, gen);
    std::vector<float> c = p.c0;
    sgemm_avx512(false, false, t.m, t.n, 0, p.a.data(), p.lda, p.b.data(), p.ldb, t.beta, c.data(), p.ldc);
    for (size_t e = 0; e < c.size(); ++e) ASSERT_EQ(c[e], t.beta * p.c0[e]);
  }
}

TEST_F(SgemmAvx512, OneCallRunTwiceGivesTheSameBits) {
  const Case t{true, false, 150, 70, 600, 0, 0, 0, 0.0f};
  std::mt19937 gen(10);
  Product p = make_product(t, gen);
  std::vector<float> first = p.c0, second = p.c0;
  sgemm_avx512(true, false, t.m, t.n, t.k, p.a.data(), p.lda, p.b.data(), p.ldb, 0.0f, first.data(), p.ldc);
  sgemm_avx512(true, false, t.m, t.n, t.k, p.a.data(), p.lda, p.b.data(), p.ldb, 0.0f, second.data(), p.ldc);
  EXPECT_EQ(first, second);
}

TEST_F(SgemmAvx512, ABiasRowIsAddedToEveryRowWithoutReadingC) {
  // beta = 0 with a bias: C = op(A) op(B) + bias, C's old values (NaN here)
  // never read, over one and several depth blocks and edge columns. The
  // exact value is that of beta = 1 from a C whose rows hold the bias.
  for (const Case& t : {Case{false, true, 13, 45, 300, 0, 1, 3, 1.0f}, Case{true, false, 29, 70, 769, 2, 0, 1, 1.0f}}) {
    SCOPED_TRACE(describe(t));
    std::mt19937 gen(14);
    Product p = make_product(t, gen);
    std::vector<float> bias(static_cast<size_t>(t.n));
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (float& x : bias) x = u(gen);
    std::vector<float> c = p.c0;
    for (int64_t i = 0; i < t.m; ++i)
      for (int64_t j = 0; j < t.n; ++j) {
        p.c0[i * p.ldc + j] = bias[j];
        c[i * p.ldc + j] = std::numeric_limits<float>::quiet_NaN();
      }
    sgemm_avx512(t.trans_a, t.trans_b, t.m, t.n, t.k, p.a.data(), p.lda, p.b.data(), p.ldb, 0.0f, c.data(), p.ldc,
                 bias.data());
    expect_product(t, p, c);
  }
}

// A fused relu is the same sums relu'd as they are stored: bit for bit the
// unfused call's result with every value <= 0 replaced by +0 (one kernel,
// the same arithmetic; the relu itself is exact), over one and several
// depth blocks (the relu must wait for the last), with a bias and with
// beta = 1; a NaN stays NaN, as the relu op keeps it.
TEST_F(SgemmAvx512, AFusedReluGivesTheBitsOfTheProductThenTheRelu) {
  for (const Case& t : {Case{false, true, 13, 45, 300, 0, 1, 3, 0.0f}, Case{true, false, 29, 70, 769, 2, 0, 1, 1.0f}}) {
    SCOPED_TRACE(describe(t));
    std::mt19937 gen(16);
    Product p = make_product(t, gen);
    std::vector<float> bias(static_cast<size_t>(t.n));
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (float& x : bias) x = u(gen);
    // A NaN in A's first row reaches C's first row.
    p.a[0] = std::numeric_limits<float>::quiet_NaN();
    std::vector<float> plain = p.c0, fused = p.c0;
    sgemm_avx512(t.trans_a, t.trans_b, t.m, t.n, t.k, p.a.data(), p.lda, p.b.data(), p.ldb, t.beta, plain.data(),
                 p.ldc, bias.data());
    sgemm_avx512(t.trans_a, t.trans_b, t.m, t.n, t.k, p.a.data(), p.lda, p.b.data(), p.ldb, t.beta, fused.data(),
                 p.ldc, bias.data(), true);
    int64_t cut = 0, passed = 0, nan = 0;
    for (int64_t i = 0; i < t.m; ++i) {
      for (int64_t j = 0; j < t.n; ++j) {
        const float want = plain[i * p.ldc + j], got = fused[i * p.ldc + j];
        if (std::isnan(want)) {
          ASSERT_TRUE(std::isnan(got)) << "entry (" << i << ", " << j << ")";
          ++nan;
        } else if (want <= 0.0f) {
          ASSERT_TRUE(got == 0.0f && !std::signbit(got)) << "entry (" << i << ", " << j << "): " << got;
          ++cut;
        } else {
          ASSERT_EQ(got, want) << "entry (" << i << ", " << j << ")";
          ++passed;
        }
      }
      for (int64_t j = t.n; j < p.ldc; ++j) ASSERT_EQ(fused[i * p.ldc + j], p.c0[i * p.ldc + j]) << "padding touched";
    }
    EXPECT_GT(cut, 0);
    EXPECT_GT(passed, 0);
    EXPECT_GT(nan, 0);
  }
}

TEST_F(SgemmAvx512, ProductsSharingBGetTheBitsOfTheirOwnCalls) {
  // Five products with one B packed once (two depth blocks, edge tiles in
  // both directions): each C is within rounding of its exact product and
  // bit for bit what its own call gives, which runs the same kernels in the
  // same order.
  for (const Case& t : {Case{false, true, 13, 45, 300, 2, 1, 3, 0.0f}, Case{true, false, 29, 70, 40, 0, 0, 0, 1.0f}}) {
    SCOPED_TRACE(describe(t));
    std::mt19937 gen(12);
    std::vector<Product> products;
    for (int i = 0; i < 5; ++i) products.push_back(make_product(t, gen));
    for (Product& p : products) p.b = products[0].b;
    std::vector<std::vector<float>> shared, own;
    std::vector<const float*> as;
    std::vector<float*> cs;
    for (const Product& p : products) {
      shared.push_back(p.c0);
      own.push_back(p.c0);
    }
    for (size_t i = 0; i < products.size(); ++i) {
      as.push_back(products[i].a.data());
      cs.push_back(shared[i].data());
    }
    const Product& first = products[0];
    sgemm_avx512_shared_b(t.trans_a, t.trans_b, t.m, t.n, t.k, as.data(), first.lda, first.b.data(), first.ldb, t.beta,
                          cs.data(), first.ldc, static_cast<int64_t>(products.size()));
    for (size_t i = 0; i < products.size(); ++i) {
      const Product& p = products[i];
      sgemm_avx512(t.trans_a, t.trans_b, t.m, t.n, t.k, p.a.data(), p.lda, p.b.data(), p.ldb, t.beta, own[i].data(),
                   p.ldc);
      expect_product(t, p, shared[i]);
      EXPECT_EQ(shared[i], own[i]) << "product " << i;
    }
  }
}

TEST_F(SgemmAvx512, ThreadedProductIsWithinRoundingAndDeterministicOnEveryThreadCount) {
  // The threads share each packed block of B and take blocks of 96 rows as
  // they come free: on 1, 2 and 3 threads every element is within rounding
  // of the exact product (a block no thread ran would not be), and the same
  // thread count run twice gives the same bits, whichever thread took which
  // rows. Several row blocks, depth blocks (k > 384), column blocks
  // (n > 1536), the packed A (A^T), beta, a fused bias and relu.
  const Case cases[] = {
      {false, true, 400, 300, 300, 0, 0, 0, 0.0f}, {true, false, 301, 45, 800, 1, 0, 2, 1.0f},
      {false, false, 97, 1600, 70, 0, 3, 1, 0.5f}, {false, true, 7, 33, 20, 0, 0, 0, 0.0f},
  };
  std::mt19937 gen(21);
  std::vector<float> bias(1600);
  for (float& x : bias) x = std::uniform_real_distribution<float>(-1.0f, 1.0f)(gen);
  for (const Case& t : cases) {
    Product p = make_product(t, gen);
    for (bool fused : {false, true}) {
      const float* b = fused ? bias.data() : nullptr;
      for (int threads : {1, 2, 3}) {
        SCOPED_TRACE(describe(t) + (fused ? " with bias and relu, " : ", ") + std::to_string(threads) + " threads");
        std::vector<float> first = p.c0, second = p.c0;
        sgemm_avx512_threaded(t.trans_a, t.trans_b, t.m, t.n, t.k, p.a.data(), p.lda, p.b.data(), p.ldb, t.beta,
                              first.data(), p.ldc, b, fused, threads);
        expect_product(t, p, first, b, fused);
        sgemm_avx512_threaded(t.trans_a, t.trans_b, t.m, t.n, t.k, p.a.data(), p.lda, p.b.data(), p.ldb, t.beta,
                              second.data(), p.ldc, b, fused, threads);
        EXPECT_EQ(first, second) << "the same call, run twice";
      }
    }
  }
}

TEST_F(SgemmAvx512, GroupedRowsGetTheBitsOfTheirOwnCalls) {
  // Five products of 13 rows sharing B, their A and C rows in evenly spaced
  // groups with gaps between them, run as one product of 65 rows (tiles of
  // 12 rows straddle the groups): each product's C is bit for bit its own
  // call's, within rounding of the exact product, and the gaps are untouched.
  for (bool trans_b : {false, true}) {
    SCOPED_TRACE(trans_b ? "B^T" : "B");
    const int64_t m = 13, n = 45, k = 300, groups = 5, lda = k + 3, ldc = n + 2;
    const int64_t a_step = m * lda + 7, c_step = m * ldc + 5;
    const Case t{false, trans_b, m, n, k, 3, 0, 2, 0.0f};
    std::mt19937 gen(15);
    const Product shape = make_product(t, gen);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::vector<float> a(static_cast<size_t>(groups * a_step)), c(static_cast<size_t>(groups * c_step));
    for (float& x : a) x = u(gen);
    for (float& x : c) x = u(gen);
    const std::vector<float> c_before = c;
    sgemm_avx512_grouped(trans_b, groups * m, n, k, a.data(), SgemmRows{m, lda, a_step}, shape.b.data(), shape.ldb,
                         0.0f, c.data(), SgemmRows{m, ldc, c_step});
    for (int64_t g = 0; g < groups; ++g) {
      Product p = shape;
      p.a.assign(a.begin() + g * a_step, a.begin() + g * a_step + m * lda);
      p.c0.assign(c_before.begin() + g * c_step, c_before.begin() + g * c_step + m * ldc);
      std::vector<float> own = p.c0;
      sgemm_avx512(false, trans_b, m, n, k, p.a.data(), lda, p.b.data(), p.ldb, 0.0f, own.data(), ldc);
      const std::vector<float> grouped(c.begin() + g * c_step, c.begin() + g * c_step + m * ldc);
      expect_product(t, p, grouped);
      EXPECT_EQ(grouped, own) << "group " << g;
      for (int64_t e = g * c_step + m * ldc; e < (g + 1) * c_step; ++e) ASSERT_EQ(c[e], c_before[e]) << "gap touched";
    }
  }
}

// Restores the automatic choice when a test ends.
class SgemmChoice {
 public:
  explicit SgemmChoice(CpuSgemm choice) { set_cpu_sgemm(choice); }
  ~SgemmChoice() { set_cpu_sgemm(CpuSgemm::automatic); }
};

// linear_relu with either float32 GEMM (fused into the engine's, a pass
// after OpenBLAS's) against float64: within the linear layer's bound, which
// the relu does not widen, and never below +0.
TEST(CpuSgemmChoice, LinearReluIsWithinRoundingWithEitherKernel) {
  Generator gen(12);
  const Tensor x = rand_uniform({210, 300}, -1.0, 1.0, gen, DType::F32);
  const Tensor w = rand_uniform({40, 300}, -1.0, 1.0, gen, DType::F32);
  const Tensor bias = rand_uniform({40}, -1.0, 1.0, gen, DType::F32);
  const std::vector<double> ref =
      linear_relu(cast(x, DType::F64), cast(w, DType::F64), cast(bias, DType::F64)).to_vector();
  const double u = std::numeric_limits<float>::epsilon() / 2;
  const double bound = 302 * u / (1 - 302 * u) * 301;
  for (CpuSgemm choice : {CpuSgemm::automatic, CpuSgemm::openblas}) {
    SgemmChoice scope(choice);
    SCOPED_TRACE(choice == CpuSgemm::automatic ? "automatic" : "openblas");
    const std::vector<double> got = linear_relu(x, w, bias).to_vector();
    int64_t zeros = 0;
    for (size_t e = 0; e < got.size(); ++e) {
      ASSERT_NEAR(got[e], ref[e], bound) << "entry " << e;
      ASSERT_FALSE(std::signbit(got[e])) << "entry " << e;
      zeros += got[e] == 0;
    }
    EXPECT_GT(zeros, 0);
  }
}

// matmul and linear with either float32 GEMM, checked against float64 copies
// of the same operands: both are within the product's rounding bound of the
// float64 result (so within twice the bound of each other).
TEST(CpuSgemmChoice, MatmulAndLinearAreWithinRoundingWithEitherKernel) {
  Generator gen(11);
  const Tensor a = rand_uniform({3, 70, 300}, -1.0, 1.0, gen, DType::F32);
  const Tensor b = rand_uniform({300, 50}, -1.0, 1.0, gen, DType::F32);
  const Tensor w = rand_uniform({40, 300}, -1.0, 1.0, gen, DType::F32);
  const Tensor bias = rand_uniform({40}, -1.0, 1.0, gen, DType::F32);
  const Tensor x = reshape(a, {210, 300});
  const Tensor ref_mm = matmul(cast(a, DType::F64), cast(b, DType::F64));
  const Tensor ref_lin = linear(cast(x, DType::F64), cast(w, DType::F64), cast(bias, DType::F64));
  // Each entry sums 300 products of magnitude at most 1 (plus a bias of at
  // most 1): within gamma_302 * 301 of the float64 value (Higham eq. 3.13).
  const double u = std::numeric_limits<float>::epsilon() / 2;
  const double bound = 302 * u / (1 - 302 * u) * 301;
  for (CpuSgemm choice : {CpuSgemm::automatic, CpuSgemm::openblas}) {
    SgemmChoice scope(choice);
    SCOPED_TRACE(choice == CpuSgemm::automatic ? "automatic" : "openblas");
    EXPECT_EQ(use_own_sgemm(), choice == CpuSgemm::automatic && sgemm_avx512_available());
    const std::vector<double> mm = matmul(a, b).to_vector(), lin = linear(x, w, bias).to_vector();
    const std::vector<double> ref_a = ref_mm.to_vector(), ref_b = ref_lin.to_vector();
    for (size_t e = 0; e < mm.size(); ++e) ASSERT_NEAR(mm[e], ref_a[e], bound) << "matmul entry " << e;
    for (size_t e = 0; e < lin.size(); ++e) ASSERT_NEAR(lin[e], ref_b[e], bound) << "linear entry " << e;
  }
}

// A weight per head broadcast over the batch ([8, 2, 20, 64] x [2, 64, 48],
// as MTSA's per-head projections): the engine's kernel runs the products
// that share a head's B together. Each entry sums 64 products of magnitude
// at most 1; with either kernel it is within gamma_65 * 64 of float64.
TEST(CpuSgemmChoice, ProductsWithABroadcastWeightPerHeadAreWithinRounding) {
  Generator gen(13);
  const Tensor a = rand_uniform({8, 2, 20, 64}, -1.0, 1.0, gen, DType::F32);
  const Tensor b = rand_uniform({2, 64, 48}, -1.0, 1.0, gen, DType::F32);
  const std::vector<double> ref = matmul(cast(a, DType::F64), cast(b, DType::F64)).to_vector();
  const double u = std::numeric_limits<float>::epsilon() / 2;
  const double bound = 65 * u / (1 - 65 * u) * 64;
  for (CpuSgemm choice : {CpuSgemm::automatic, CpuSgemm::openblas}) {
    SgemmChoice scope(choice);
    SCOPED_TRACE(choice == CpuSgemm::automatic ? "automatic" : "openblas");
    for (const Tensor& b_view : {b, transpose(contiguous(transpose(b, 1, 2)), 1, 2)}) {
      const std::vector<double> got = matmul(a, b_view).to_vector();
      ASSERT_EQ(got.size(), ref.size());
      for (size_t e = 0; e < got.size(); ++e) ASSERT_NEAR(got[e], ref[e], bound) << "entry " << e;
    }
  }
}

}  // namespace
}  // namespace attn
