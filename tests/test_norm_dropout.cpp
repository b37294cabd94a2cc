// layer_norm against hand computation and a float64 reference; dropout and
// bernoulli: determinism from the seed, drop rates, scaling, gradients and
// argument errors.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "test_util.h"
#include "attn/engine/error.h"
#include "attn/engine/random.h"
#include "attn/engine/copy.h"
#include "attn/ops/dropout/dropout.h"
#include "attn/ops/dropout/dropout_stream.h"
#include "attn/ops/layer_norm/layer_norm.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/ops/registry.h"
#include "attn/ops/view/view.h"

namespace attn {
namespace {

using namespace testing_support;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// Straightforward double-precision layer norm of a [rows, D] tensor.
std::vector<double> reference_layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps) {
  const int64_t D = x.size(-1), rows = x.numel() / D;
  std::vector<double> v = x.to_vector(), g = gamma.to_vector(), b = beta.to_vector(), y(v.size());
  for (int64_t r = 0; r < rows; ++r) {
    double mu = 0, var = 0;
    for (int64_t i = 0; i < D; ++i) mu += v[r * D + i];
    mu /= D;
    for (int64_t i = 0; i < D; ++i) var += (v[r * D + i] - mu) * (v[r * D + i] - mu);
    var /= D;
    for (int64_t i = 0; i < D; ++i) y[r * D + i] = (v[r * D + i] - mu) / std::sqrt(var + eps) * g[i] + b[i];
  }
  return y;
}

// ---------------------------------------------------------------- layer_norm

TEST(LayerNorm, RowsHaveZeroMeanAndUnitVarianceWithIdentityAffine) {
  Generator gen(1);
  Tensor x = rand_uniform({5, 16}, -3.0, 7.0, gen, DType::F64);
  Tensor y = layer_norm(x, ones({16}, DType::F64), zeros({16}, DType::F64), 0.0);
  for (int64_t r = 0; r < 5; ++r) {
    double mu = 0, var = 0;
    for (int64_t i = 0; i < 16; ++i) mu += y.at({r, i});
    mu /= 16;
    for (int64_t i = 0; i < 16; ++i) var += (y.at({r, i}) - mu) * (y.at({r, i}) - mu);
    var /= 16;
    EXPECT_NEAR(mu, 0.0, 1e-12) << "row " << r;
    EXPECT_NEAR(var, 1.0, 1e-12) << "row " << r;
  }
}

TEST(LayerNorm, HandWorkedRow) {
  // x = [1, 2, 3, 4]: mean 2.5, biased variance 1.25.
  Tensor x = from_vector({1, 2, 3, 4}, {1, 4}, DType::F64);
  Tensor gamma = from_vector({1, 2, 0.5, -1}, {4}, DType::F64);
  Tensor beta = from_vector({0, 1, -1, 0.5}, {4}, DType::F64);
  Tensor y = layer_norm(x, gamma, beta, 0.0);
  const double s = 1.0 / std::sqrt(1.25);
  std::vector<double> expected = {-1.5 * s, -0.5 * s * 2 + 1, 0.5 * s * 0.5 - 1, -1.5 * s + 0.5};
  std::vector<double> got = y.to_vector();
  ASSERT_EQ(y.shape(), (Shape{1, 4}));
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(got[i], expected[i], 1e-12) << i;
  EXPECT_NEAR(got[0], -1.3416407864998738, 1e-12);
}

TEST(LayerNorm, EpsEntersUnderTheSquareRoot) {
  Tensor x = from_vector({1, 2, 3, 4}, {4}, DType::F64);
  Tensor y = layer_norm(x, Tensor(), Tensor(), 0.75);  // var + eps = 2
  EXPECT_NEAR(y.at({3}), 1.5 / std::sqrt(2.0), 1e-12);
}

TEST(LayerNorm, GradientsOfParametersAndUniformUpstream) {
  Tensor x = from_vector({1, 2, 3, 4, -1, 0, 2, 7}, {2, 4}, DType::F64).set_requires_grad(true);
  Tensor gamma = ones({4}, DType::F64).set_requires_grad(true);
  Tensor beta = zeros({4}, DType::F64).set_requires_grad(true);
  Tensor y = layer_norm(x, gamma, beta, 0.0);
  y.backward(ones({2, 4}, DType::F64));
  // dbeta sums the upstream gradient over rows; dgamma sums xhat over rows.
  std::vector<double> xhat = y.to_vector();
  for (int64_t i = 0; i < 4; ++i) {
    EXPECT_NEAR(beta.grad().at({i}), 2.0, 1e-12);
    EXPECT_NEAR(gamma.grad().at({i}), xhat[i] + xhat[4 + i], 1e-12);
  }
  // A uniform upstream gradient through unit gamma cannot move a normalised row.
  for (double g : x.grad().to_vector()) EXPECT_NEAR(g, 0.0, 1e-12);
}

TEST(LayerNorm, HandWorkedInputGradient) {
  // y = xhat (no affine), loss = y[0]: dx_j = rstd * (delta_0j - 1/D - xhat_0 xhat_j / D).
  Tensor x = from_vector({1, 2, 3, 4}, {4}, DType::F64).set_requires_grad(true);
  Tensor y = layer_norm(x, Tensor(), Tensor(), 0.0);
  y.backward(from_vector({1, 0, 0, 0}, {4}, DType::F64));
  const double s = 1.0 / std::sqrt(1.25);
  std::vector<double> xhat = {-1.5 * s, -0.5 * s, 0.5 * s, 1.5 * s};
  for (int64_t j = 0; j < 4; ++j) {
    double expected = s * ((j == 0 ? 1.0 : 0.0) - 0.25 - xhat[0] * xhat[j] / 4);
    EXPECT_NEAR(x.grad().at({j}), expected, 1e-12) << j;
  }
}

TEST(LayerNorm, Float32AgreesWithFloat64) {
  Generator gen(2);
  Tensor x64 = rand_uniform({8, 37}, -2.0, 3.0, gen, DType::F64);
  Tensor g64 = rand_uniform({37}, 0.5, 1.5, gen, DType::F64);
  Tensor b64 = rand_uniform({37}, -1.0, 1.0, gen, DType::F64);
  Tensor up64 = rand_uniform({8, 37}, -1.0, 1.0, gen, DType::F64);
  auto run = [&](DType dt, std::vector<double>* y, std::vector<double>* dx, std::vector<double>* dg,
                 std::vector<double>* db) {
    Tensor x = cast(x64, dt).detach().set_requires_grad(true);
    Tensor g = cast(g64, dt).detach().set_requires_grad(true);
    Tensor b = cast(b64, dt).detach().set_requires_grad(true);
    Tensor out = layer_norm(x, g, b);
    EXPECT_EQ(out.dtype(), dt);
    out.backward(cast(up64, dt));
    *y = out.to_vector();
    *dx = x.grad().to_vector();
    *dg = g.grad().to_vector();
    *db = b.grad().to_vector();
  };
  std::vector<double> y32, dx32, dg32, db32, y64, dx64, dg64, db64;
  run(DType::F32, &y32, &dx32, &dg32, &db32);
  run(DType::F64, &y64, &dx64, &dg64, &db64);
  for (size_t i = 0; i < y64.size(); ++i) {
    EXPECT_NEAR(y32[i], y64[i], 2e-5) << i;
    EXPECT_NEAR(dx32[i], dx64[i], 2e-5) << i;
  }
  for (size_t i = 0; i < dg64.size(); ++i) {
    EXPECT_NEAR(dg32[i], dg64[i], 1e-4) << i;
    EXPECT_NEAR(db32[i], db64[i], 1e-4) << i;
  }
}

TEST(LayerNorm, LargeInputMatchesReferenceAcrossRowBlocks) {
  // 4096 x 64 spreads the rows over several parallel blocks.
  Generator gen(3);
  const int64_t rows = 4096, D = 64;
  Tensor x = rand_uniform({rows, D}, -2.0, 2.0, gen, DType::F64).set_requires_grad(true);
  Tensor gamma = rand_uniform({D}, 0.5, 1.5, gen, DType::F64).set_requires_grad(true);
  Tensor beta = rand_uniform({D}, -1.0, 1.0, gen, DType::F64).set_requires_grad(true);
  Tensor up = rand_uniform({rows, D}, -1.0, 1.0, gen, DType::F64);
  Tensor y = layer_norm(x, gamma, beta);
  std::vector<double> expected = reference_layer_norm(x, gamma, beta, 1e-6);
  std::vector<double> got = y.to_vector();
  for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], expected[i], 1e-10) << i;

  y.backward(up);
  // dgamma = sum_rows up * xhat, dbeta = sum_rows up, with xhat = (y - beta) / gamma.
  std::vector<double> u = up.to_vector(), g = gamma.to_vector(), b = beta.to_vector();
  for (int64_t i = 0; i < D; ++i) {
    double dg = 0, db = 0;
    for (int64_t r = 0; r < rows; ++r) {
      dg += u[r * D + i] * (got[r * D + i] - b[i]) / g[i];
      db += u[r * D + i];
    }
    EXPECT_NEAR(gamma.grad().at({i}), dg, 1e-9) << i;
    EXPECT_NEAR(beta.grad().at({i}), db, 1e-9) << i;
  }
}

TEST(LayerNorm, TransposedAndThreeDimensionalInputs) {
  Generator gen(4);
  Tensor base = rand_uniform({6, 4}, -2.0, 2.0, gen, DType::F64);
  Tensor xt = transpose(base, 0, 1);  // [4, 6], non-contiguous
  ASSERT_FALSE(xt.is_contiguous());
  Tensor gamma = rand_uniform({6}, 0.5, 1.5, gen, DType::F64);
  Tensor beta = rand_uniform({6}, -1.0, 1.0, gen, DType::F64);
  EXPECT_EQ(layer_norm(xt, gamma, beta).to_vector(), layer_norm(contiguous(xt), gamma, beta).to_vector());

  Tensor x3 = rand_uniform({2, 3, 6}, -2.0, 2.0, gen, DType::F64);
  Tensor y3 = layer_norm(x3, gamma, beta);
  EXPECT_EQ(y3.shape(), (Shape{2, 3, 6}));
  EXPECT_EQ(y3.to_vector(), layer_norm(reshape(x3, {6, 6}), gamma, beta).to_vector());
}

TEST(LayerNorm, ShapeDtypeAndAxisErrors) {
  Tensor x = zeros({2, 4});
  std::string m = error_of([&] { layer_norm(x, ones({3}), zeros({4})); });
  EXPECT_TRUE(contains(m, "layer_norm")) << m;
  EXPECT_TRUE(contains(m, "gamma")) << m;
  EXPECT_TRUE(contains(m, "[3]")) << m;
  EXPECT_TRUE(contains(m, "[2, 4]")) << m;

  m = error_of([&] { layer_norm(x, ones({4}), zeros({4, 1})); });
  EXPECT_TRUE(contains(m, "beta")) << m;
  EXPECT_TRUE(contains(m, "[4, 1]")) << m;

  m = error_of([&] { layer_norm(x, ones({4}, DType::F64), Tensor()); });
  EXPECT_TRUE(contains(m, "float64")) << m;
  EXPECT_TRUE(contains(m, "float32")) << m;

  m = error_of([] { layer_norm(scalar(1.0), Tensor(), Tensor()); });
  EXPECT_TRUE(contains(m, "layer_norm")) << m;
  EXPECT_TRUE(contains(m, "[]")) << m;

  m = error_of([&] { layer_norm(x, Tensor(), Tensor(), -1.0); });
  EXPECT_TRUE(contains(m, "eps")) << m;
}

// ------------------------------------------------------------------- dropout

TEST(Dropout, SameSeedSameMaskDifferentSeedsDiffer) {
  Tensor x = ones({1000});
  Generator a(5), b(5), c(6);
  std::vector<double> ya = dropout(x, 0.3, a).to_vector();
  EXPECT_EQ(ya, dropout(x, 0.3, b).to_vector());
  EXPECT_NE(ya, dropout(x, 0.3, c).to_vector());
  // The generator advances: the next call on `a` draws a new mask.
  EXPECT_NE(ya, dropout(x, 0.3, a).to_vector());
}

TEST(Dropout, DropRateScaleAndMeanOnALargeTensor) {
  const double p = 0.3;
  const int64_t n = 100000;
  Generator gen(7);
  std::vector<double> y = dropout(ones({n}), p, gen).to_vector();
  int64_t dropped = 0;
  double total = 0;
  for (double v : y) {
    if (v == 0) {
      ++dropped;
    } else {
      EXPECT_FLOAT_EQ(static_cast<float>(v), static_cast<float>(1.0 / (1.0 - p)));
    }
    total += v;
  }
  EXPECT_NEAR(static_cast<double>(dropped) / n, p, 0.01);
  EXPECT_NEAR(total / n, 1.0, 0.02);

  // Mean preserved for general values too.
  Tensor x = rand_uniform({n}, 0.0, 2.0, gen, DType::F64);
  EXPECT_NEAR(mean(dropout(x, p, gen)).item(), mean(x).item(), 0.02);
}

// The mask is the documented stream (ops/dropout/dropout_stream.h) at every index,
// across the kernel's parallel chunks, and neighbouring draws are unrelated
// (pairs both dropped at rate p^2, not p).
TEST(Dropout, MaskIsTheCounterStreamAtEveryIndex) {
  const double p = 0.25;
  // Several 16k blocks and a ragged end longer than half a block, whose
  // second half has fewer elements than its first.
  const int64_t n = 4 * 16384 + 12345;
  Generator gen(11), replay(11);
  std::vector<double> y = dropout(ones({n}), p, gen).to_vector();
  const uint64_t key = dropout_stream::stream_key(replay.derive_seed());
  const uint64_t threshold = static_cast<uint64_t>(std::llround(p * dropout_stream::kTwoTo32));
  int64_t mismatches = 0, both_dropped = 0;
  for (int64_t i = 0; i < n; ++i) {
    const bool keep = dropout_stream::draw_u32(key, i) >= threshold;
    mismatches += keep != (y[static_cast<size_t>(i)] != 0);
    if (i > 0) both_dropped += y[static_cast<size_t>(i)] == 0 && y[static_cast<size_t>(i - 1)] == 0;
  }
  EXPECT_EQ(mismatches, 0);
  // Binomial(n, p^2 = 0.0625): its standard deviation is ~64 pairs; allow 5 of them.
  EXPECT_NEAR(static_cast<double>(both_dropped), p * p * (n - 1), 5 * std::sqrt(p * p * (1 - p * p) * (n - 1)));
}

TEST(Dropout, EvalModeAndZeroProbabilityAreIdentity) {
  Tensor x = from_vector({1, 2, 3}, {3});
  Generator gen(8), fresh(8);
  EXPECT_EQ(dropout(x, 0.5, gen, false).impl(), x.impl());
  EXPECT_EQ(dropout(x, 0.0, gen).impl(), x.impl());
  EXPECT_EQ(gen.next_u64(), fresh.next_u64()) << "identity must not consume randomness";
}

TEST(Dropout, RejectsProbabilitiesOutsideZeroToOne) {
  Tensor x = ones({4});
  Generator gen(9);
  for (double p : {1.0, -0.1, 1.5, std::numeric_limits<double>::quiet_NaN()}) {
    std::string m = error_of([&] { dropout(x, p, gen); });
    EXPECT_TRUE(contains(m, "dropout")) << p << ": " << m;
    EXPECT_TRUE(contains(m, "[0, 1)")) << p << ": " << m;
  }
  EXPECT_TRUE(contains(error_of([&] { dropout(x, 1.0, gen, false); }), "dropout"));
}

TEST(Dropout, GradientIsMaskOverKeepProbability) {
  const double p = 0.3;
  Generator gen(10);
  Tensor x = rand_uniform({50, 40}, 0.5, 1.5, gen, DType::F64).set_requires_grad(true);
  Tensor y = dropout(x, p, gen);
  y.backward(ones({50, 40}, DType::F64));
  std::vector<double> yv = y.to_vector(), gv = x.grad().to_vector(), xv = x.to_vector();
  int64_t kept = 0;
  for (size_t i = 0; i < yv.size(); ++i) {
    const bool keep = yv[i] != 0;  // x is never 0
    kept += keep;
    EXPECT_DOUBLE_EQ(gv[i], keep ? 1.0 / (1.0 - p) : 0.0) << i;
    if (keep) {
      EXPECT_DOUBLE_EQ(yv[i], xv[i] / (1.0 - p)) << i;
    }
  }
  EXPECT_GT(kept, 0);
  EXPECT_LT(kept, 2000);
}

// Dropped elements are selected out of the backward, not multiplied by 0:
// a NaN gradient there gives exactly 0, a NaN at a kept element passes.
// Both dtypes, and a strided incoming gradient (read through a transpose).
TEST(Dropout, BackwardSelectsDroppedElementsOut) {
  const double p = 0.5;
  for (DType dtype : {DType::F32, DType::F64}) {
    Generator gen(12);
    Tensor x = rand_uniform({16, 24}, 0.5, 1.5, gen, dtype).set_requires_grad(true);
    Tensor y = dropout(x, p, gen);
    Tensor g = transpose(full({24, 16}, std::numeric_limits<double>::quiet_NaN(), dtype), 0, 1);
    y.backward(g);
    std::vector<double> yv = y.to_vector(), gv = x.grad().to_vector();
    int64_t kept = 0;
    for (size_t i = 0; i < yv.size(); ++i) {
      const bool keep = yv[i] != 0;  // x is never 0
      kept += keep;
      if (keep) {
        EXPECT_TRUE(std::isnan(gv[i])) << i;
      } else {
        EXPECT_EQ(gv[i], 0.0) << i;
      }
    }
    EXPECT_GT(kept, 0);
    EXPECT_LT(kept, 16 * 24);
  }
}

TEST(Dropout, MaskFollowsLogicalOrderForStridedInput) {
  Generator g0(0);
  Tensor base = rand_uniform({30, 20}, 0.5, 1.5, g0, DType::F64);
  Tensor xt = transpose(base, 0, 1);
  Generator a(11), b(11);
  EXPECT_EQ(dropout(xt, 0.4, a).to_vector(), dropout(contiguous(xt), 0.4, b).to_vector());
}

#ifdef _OPENMP
TEST(Dropout, MaskDoesNotDependOnThreadCount) {
  // The mask is drawn per element from a counter-based stream, so which
  // elements are dropped is the same whatever the split: compared exactly.
  // The kept values come from different thread splits, so they are compared
  // to the rounding of the one multiplication x * 1/(1-p) (half an ulp each).
  Tensor x = ones({300000});
  const int threads = omp_get_max_threads();
  Generator a(12), b(12);
  omp_set_num_threads(3);  // an uneven split even on a one-core machine
  std::vector<double> many = dropout(x, 0.25, a).to_vector();
  omp_set_num_threads(1);
  std::vector<double> one = dropout(x, 0.25, b).to_vector();
  omp_set_num_threads(threads);
  ASSERT_EQ(many.size(), one.size());
  const double scale = 1.0 / 0.75, tol = scale * std::numeric_limits<float>::epsilon();
  for (size_t i = 0; i < many.size(); ++i) {
    ASSERT_EQ(many[i] == 0, one[i] == 0) << "element " << i << " is dropped under one split only";
    ASSERT_NEAR(many[i], one[i], tol) << "element " << i;
  }
}
#endif

TEST(Dropout, RegistrySamplesDropSomeAndKeepSome) {
  const OpSpec* spec = op_registry().find("dropout");
  ASSERT_NE(spec, nullptr);
  for (const OpCase& c : spec->cases()) {
    std::vector<double> y = c.fn(c.inputs).to_vector();
    int64_t zeros_seen = 0;
    for (double v : y) zeros_seen += v == 0;
    EXPECT_GT(zeros_seen, 0) << c.label;
    EXPECT_LT(zeros_seen, static_cast<int64_t>(y.size())) << c.label;
    EXPECT_EQ(y, c.fn(c.inputs).to_vector()) << c.label << ": each evaluation must draw the same mask";
  }
}

// ----------------------------------------------------------------- bernoulli

TEST(Bernoulli, MeanNearProbabilityAndValuesAreZeroOrOne) {
  Generator gen(13);
  Tensor probs = full({100000}, 0.3);
  Tensor s = bernoulli(probs, gen);
  EXPECT_EQ(s.dtype(), DType::F32);
  EXPECT_EQ(s.shape(), probs.shape());
  double total = 0;
  for (double v : s.to_vector()) {
    EXPECT_TRUE(v == 0.0 || v == 1.0) << v;
    total += v;
  }
  EXPECT_NEAR(total / 100000, 0.3, 0.01);
}

TEST(Bernoulli, CertainProbabilitiesAreExact) {
  Generator gen(14);
  std::vector<double> p;
  for (int i = 0; i < 5000; ++i) p.push_back(i % 3 == 0 ? 1.0 : 0.0);
  Tensor probs = from_vector(p, {5000}, DType::F64);
  EXPECT_EQ(bernoulli(probs, gen).to_vector(), p);
}

TEST(Bernoulli, SeededAndNeverRecorded) {
  Generator a(15), b(15);
  Tensor probs = full({64}, 0.5, DType::F64).set_requires_grad(true);
  Tensor s = bernoulli(probs, a);
  EXPECT_FALSE(s.requires_grad());
  EXPECT_EQ(s.to_vector(), bernoulli(probs, b).to_vector());
}

TEST(Bernoulli, RejectsProbabilitiesOutsideZeroToOne) {
  Generator gen(16);
  for (double bad : {-0.1, 1.1, std::numeric_limits<double>::quiet_NaN()}) {
    Tensor probs = from_vector({0.2, bad, 0.7}, {3});
    std::string m = error_of([&] { bernoulli(probs, gen); });
    EXPECT_TRUE(contains(m, "bernoulli")) << bad << ": " << m;
    EXPECT_TRUE(contains(m, "[0, 1]")) << bad << ": " << m;
    EXPECT_TRUE(contains(m, "[3]")) << bad << ": " << m;
  }
  EXPECT_TRUE(contains(error_of([&] { bernoulli(from_indices({0, 1}, {2}), gen); }), "int64"));
}

}  // namespace
}  // namespace attn
