// Softmax, log_softmax and the losses: values against hand computation, masks
// that give exact zeros and never NaN, stability at large logits, cross_entropy
// against its definition, and the error messages.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "test_util.h"
#include "attn/engine/error.h"
#include "attn/ops/binary/binary.h"
#include "attn/engine/copy.h"
#include "attn/ops/loss/loss.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/ops/softmax/softmax.h"
#include "attn/ops/view/view.h"
#include "attn/engine/random.h"

namespace attn {
namespace {

using namespace testing_support;

using ::testing::HasSubstr;

constexpr double kInf = std::numeric_limits<double>::infinity();

Tensor mask_of(const std::vector<int64_t>& values, const Shape& shape) {
  Tensor m = empty(shape, DType::U8);
  for (int64_t i = 0; i < m.numel(); ++i) m.data<uint8_t>()[i] = static_cast<uint8_t>(values[i]);
  return m;
}

Tensor leaf(const std::vector<double>& values, const Shape& shape, DType dtype = DType::F64) {
  return from_vector(values, shape, dtype).set_requires_grad(true);
}

void expect_all_finite(const Tensor& t) {
  for (double v : t.to_vector()) EXPECT_TRUE(std::isfinite(v)) << t.to_string();
}

// Softmax of a vector by the textbook formula (inputs small enough not to overflow).
std::vector<double> reference_softmax(const std::vector<double>& x) {
  double s = 0;
  for (double v : x) s += std::exp(v);
  std::vector<double> y;
  for (double v : x) y.push_back(std::exp(v) / s);
  return y;
}

// A fixed, non-uniform upstream gradient: backward of sum(y * ramp).
Tensor ramp_like(const Tensor& y) {
  Tensor r = empty(y.shape(), y.dtype());
  for (int64_t i = 0; i < r.numel(); ++i) write_element(r, i, 0.3 + 0.25 * static_cast<double>(i % 5) - 0.1 * i);
  return r;
}

TEST(Softmax, MatchesHandComputationAlongLastAxis) {
  Tensor x = from_vector({1, 2, 3, -1, 0, 0.5}, {2, 3}, DType::F64);
  Tensor y = softmax(x, -1);
  std::vector<double> r0 = reference_softmax({1, 2, 3}), r1 = reference_softmax({-1, 0, 0.5});
  for (int j = 0; j < 3; ++j) {
    EXPECT_NEAR(y.at({0, j}), r0[j], 1e-15);
    EXPECT_NEAR(y.at({1, j}), r1[j], 1e-15);
  }
  Tensor ly = log_softmax(x, 1);
  const double lse0 = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0));
  EXPECT_NEAR(ly.at({0, 0}), 1 - lse0, 1e-14);
  EXPECT_NEAR(ly.at({0, 2}), 3 - lse0, 1e-14);
}

TEST(Softmax, OtherAxesAndTransposedInputsMatchTheLastAxisPath) {
  Tensor base = from_vector({0.1, -0.4, 0.9, 1.3, -2.0, 0.2, 0.7, 0.0, -0.3, 0.5, 1.1, -0.8}, {3, 4}, DType::F64);
  // Axis 0 of base == axis 1 of its transpose, computed through two layouts.
  Tensor along0 = softmax(base, 0);
  Tensor t = contiguous(transpose(base, 0, 1));
  Tensor along_last = softmax(t, -1);
  Tensor strided = softmax(transpose(base, 0, 1), -1);  // non-contiguous input
  EXPECT_EQ(along0.shape(), (Shape{3, 4}));
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 4; ++j) {
      EXPECT_NEAR(along0.at({i, j}), along_last.at({j, i}), 1e-15);
      EXPECT_NEAR(strided.at({j, i}), along_last.at({j, i}), 1e-15);
    }
  // A middle axis: each column of every batch sums to 1.
  Tensor x3 = reshape(from_vector(std::vector<double>(base.to_vector()), {12}, DType::F64), {2, 3, 2});
  Tensor y3 = log_softmax(x3, 1);
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t k = 0; k < 2; ++k) {
      double s = 0;
      for (int64_t j = 0; j < 3; ++j) s += std::exp(y3.at({b, j, k}));
      EXPECT_NEAR(s, 1.0, 1e-14);
    }
}

// softmax over a middle axis runs the column kernels on x's own layout; the
// rows path on a transposed copy is the reference, forward and backward, in
// both dtypes, with no mask, a [B, n, 1] mask (one batch fully masked) and a
// per-feature mask; NaN and 1e30 at masked positions must not leak.
TEST(Softmax, MiddleAxisColumnsMatchTheRowsPath) {
  Generator gen(5);
  const int64_t B = 3, n = 7, d = 300;  // d > one column block of 256
  for (DType dt : {DType::F64, DType::F32}) {
    Tensor x = rand_uniform({B, n, d}, -3, 3, gen, DType::F64);
    Tensor g = rand_uniform({B, n, d}, -1, 1, gen, DType::F64);
    Tensor row_mask = cast(gt(rand_uniform({B, n, 1}, 0, 1, gen, DType::F64), full({}, 0.3, DType::F64)), DType::U8);
    for (int64_t j = 0; j < n; ++j) write_element(row_mask, (B - 1) * n + j, 0);  // last batch: nothing valid
    Tensor feature_mask =
        cast(gt(rand_uniform({B, n, d}, 0, 1, gen, DType::F64), full({}, 0.5, DType::F64)), DType::U8);
    for (const Tensor& mask : {Tensor(), row_mask, feature_mask}) {
      Tensor xin = x;
      if (mask.defined()) {
        Tensor blocked = eq(expand(mask, x.shape()), zeros({}, DType::U8));
        xin = where(blocked, full({}, std::numeric_limits<double>::quiet_NaN(), DType::F64), x);
        for (int64_t i = 0; i < xin.numel(); i += 97)  // every 97th masked entry huge instead of NaN
          if (read_element(blocked, i) != 0) write_element(xin, i, 1e30);
      }
      Tensor a = cast(xin, dt).detach().set_requires_grad(true);
      Tensor got = softmax(a, 1, mask);
      sum(got * cast(g, dt)).backward();
      Tensor b = cast(xin, dt).detach().set_requires_grad(true);
      Tensor mask_t = mask.defined() ? transpose(expand(mask, x.shape()), 1, 2) : Tensor();
      Tensor want = transpose(softmax(transpose(b, 1, 2), -1, mask_t), 1, 2);
      sum(want * cast(g, dt)).backward();
      // Both paths sum in double and differ only in the order of a few
      // roundings of the dtype: 16 ulps of 1.
      const double tol = 16 * (dt == DType::F32 ? std::ldexp(1.0, -24) : std::ldexp(1.0, -53));
      EXPECT_LT(testing_support::max_abs_diff(got, want), tol) << dtype_name(dt);
      EXPECT_LT(testing_support::max_abs_diff(a.grad(), b.grad()), tol) << dtype_name(dt);
      EXPECT_GT(testing_support::max_abs(a.grad()), 1e-3) << dtype_name(dt);
      for (double v : got.to_vector()) ASSERT_TRUE(std::isfinite(v)) << dtype_name(dt);
    }
  }
}

TEST(Softmax, BackwardMatchesClosedForm) {
  Tensor x = leaf({0.2, -0.5, 1.0, 0.3, 0.0, -1.2, 0.8, 0.4}, {2, 4});
  Tensor y = softmax(x, -1);
  Tensor g = ramp_like(y);
  sum(y * g).backward();
  for (int64_t r = 0; r < 2; ++r) {
    double dot = 0;
    for (int64_t j = 0; j < 4; ++j) dot += g.at({r, j}) * y.at({r, j});
    for (int64_t j = 0; j < 4; ++j)
      EXPECT_NEAR(x.grad().at({r, j}), y.at({r, j}) * (g.at({r, j}) - dot), 1e-15);
  }

  Tensor x2 = leaf({0.2, -0.5, 1.0, 0.3, 0.0, -1.2, 0.8, 0.4}, {2, 4});
  Tensor ly = log_softmax(x2, -1);
  sum(ly * g).backward();
  for (int64_t r = 0; r < 2; ++r) {
    double gs = 0;
    for (int64_t j = 0; j < 4; ++j) gs += g.at({r, j});
    for (int64_t j = 0; j < 4; ++j)
      EXPECT_NEAR(x2.grad().at({r, j}), g.at({r, j}) - std::exp(ly.at({r, j})) * gs, 1e-14);
  }
}

TEST(SoftmaxMask, MaskedEntriesAreExactlyZeroAndTheRestRenormalise) {
  Tensor x = leaf({0.5, 2.0, -1.0, 0.3, 1.5, 0.1, 0.2, -0.7}, {2, 4});
  Tensor mask = mask_of({1, 0, 1, 1}, {4});
  Tensor y = softmax(x, -1, mask);
  std::vector<double> r = reference_softmax({0.5, -1.0, 0.3});
  EXPECT_EQ(y.at({0, 1}), 0.0);
  EXPECT_EQ(y.at({1, 1}), 0.0);
  EXPECT_NEAR(y.at({0, 0}), r[0], 1e-15);
  EXPECT_NEAR(y.at({0, 2}), r[1], 1e-15);
  EXPECT_NEAR(y.at({0, 3}), r[2], 1e-15);
  sum(y * ramp_like(y)).backward();
  EXPECT_EQ(x.grad().at({0, 1}), 0.0);
  EXPECT_EQ(x.grad().at({1, 1}), 0.0);
  EXPECT_NE(x.grad().at({0, 0}), 0.0);

  Tensor x2 = leaf({0.5, 2.0, -1.0, 0.3, 1.5, 0.1, 0.2, -0.7}, {2, 4});
  Tensor ly = log_softmax(x2, -1, mask);
  EXPECT_EQ(ly.at({0, 1}), 0.0);
  EXPECT_NEAR(ly.at({0, 0}), std::log(r[0]), 1e-14);
  Tensor g = ramp_like(ly);
  sum(ly * g).backward();
  EXPECT_EQ(x2.grad().at({0, 1}), 0.0);
  // Valid entries: g - softmax * (sum of g over valid entries only).
  const double gs = g.at({0, 0}) + g.at({0, 2}) + g.at({0, 3});
  EXPECT_NEAR(x2.grad().at({0, 0}), g.at({0, 0}) - r[0] * gs, 1e-14);
  EXPECT_NEAR(x2.grad().at({0, 3}), g.at({0, 3}) - r[2] * gs, 1e-14);
}

TEST(SoftmaxMask, FullyMaskedRowGivesZerosAndZeroGradientWithoutNaN) {
  // Mask broadcast from [B, 1, L]: batch 1 masks every key.
  Tensor mask = mask_of({1, 1, 0, 0, 0, 0}, {2, 1, 3});
  for (bool log : {false, true}) {
    Tensor x = leaf({0.1, 0.2, 0.3, 0.4, 0.5, 0.6, -kInf, 1e30, 2.0, 0.7, -0.2, 0.9}, {2, 2, 3});
    Tensor y = log ? log_softmax(x, -1, mask) : softmax(x, -1, mask);
    for (int64_t r = 0; r < 2; ++r)
      for (int64_t j = 0; j < 3; ++j) EXPECT_EQ(y.at({1, r, j}), 0.0) << "log=" << log;
    expect_all_finite(y);
    sum(y * ramp_like(y)).backward();
    expect_all_finite(x.grad());
    for (int64_t r = 0; r < 2; ++r)
      for (int64_t j = 0; j < 3; ++j) EXPECT_EQ(x.grad().at({1, r, j}), 0.0) << "log=" << log;
    EXPECT_NE(x.grad().at({0, 0, 0}), 0.0) << "log=" << log;
  }
}

TEST(SoftmaxMask, NegativeInfinityAndHugeValuesAtMaskedPositionsStayFinite) {
  Tensor mask = mask_of({1, 0, 1, 0}, {4});
  for (bool log : {false, true}) {
    Tensor x = leaf({0.4, -kInf, -0.6, 1e30, 1.0, 1e30, 0.2, -kInf}, {2, 4});
    Tensor y = log ? log_softmax(x, 1, mask) : softmax(x, 1, mask);
    expect_all_finite(y);
    std::vector<double> r0 = reference_softmax({0.4, -0.6}), r1 = reference_softmax({1.0, 0.2});
    EXPECT_NEAR(y.at({0, 0}), log ? std::log(r0[0]) : r0[0], 1e-14);
    EXPECT_NEAR(y.at({1, 2}), log ? std::log(r1[1]) : r1[1], 1e-14);
    EXPECT_EQ(y.at({0, 3}), 0.0);
    sum(y * ramp_like(y)).backward();
    expect_all_finite(x.grad());
    EXPECT_EQ(x.grad().at({0, 1}), 0.0);
    EXPECT_EQ(x.grad().at({1, 1}), 0.0);
  }
}

TEST(Softmax, LargeLogitsAreStable) {
  for (DType dtype : {DType::F32, DType::F64}) {
    Tensor big = leaf({1000, 1001, 1002}, {3}, dtype);
    Tensor small = from_vector({0, 1, 2}, {3}, dtype);
    Tensor y = softmax(big, 0);
    Tensor ly = log_softmax(big, 0);
    std::vector<double> r = reference_softmax({0, 1, 2});
    for (int64_t j = 0; j < 3; ++j) {
      EXPECT_NEAR(y.at({j}), r[j], 1e-6);
      EXPECT_NEAR(ly.at({j}), log_softmax(small, 0).at({j}), 1e-5);
    }
    sum(ly * ramp_like(ly)).backward();
    expect_all_finite(big.grad());
  }
}

TEST(Softmax, Float32MatchesFloat64) {
  std::vector<double> v = {0.3, -1.2, 2.5, 0.0, 1.7, -0.4, 0.9, -2.2, 1.1, 0.6, -0.9, 0.25};
  Tensor mask = mask_of({1, 1, 0, 1}, {4});
  for (bool log : {false, true}) {
    Tensor x64 = leaf(v, {3, 4}, DType::F64);
    Tensor x32 = leaf(v, {3, 4}, DType::F32);
    Tensor y64 = log ? log_softmax(x64, 0, mask) : softmax(x64, 0, Tensor());
    Tensor y32 = log ? log_softmax(x32, 0, mask) : softmax(x32, 0, Tensor());
    sum(y64 * ramp_like(y64)).backward();
    sum(y32 * ramp_like(y32)).backward();
    std::vector<double> a = y64.to_vector(), b = y32.to_vector();
    std::vector<double> ga = x64.grad().to_vector(), gb = x32.grad().to_vector();
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_NEAR(a[i], b[i], 1e-5);
      EXPECT_NEAR(ga[i], gb[i], 1e-5);
    }
  }
}

TEST(SoftmaxErrors, MaskDtypeAndShapeAreChecked) {
  Tensor x = zeros({2, 3});
  std::string m = error_of([&] { softmax(x, -1, zeros({3})); });
  EXPECT_THAT(m, HasSubstr("softmax"));
  EXPECT_THAT(m, HasSubstr("uint8"));
  EXPECT_THAT(m, HasSubstr("float32"));
  m = error_of([&] { log_softmax(x, -1, mask_of({1, 0}, {2})); });
  EXPECT_THAT(m, HasSubstr("log_softmax"));
  EXPECT_THAT(m, HasSubstr("[2, 3]"));
  m = error_of([&] { softmax(from_indices({1, 2}, {2}), 0); });
  EXPECT_THAT(m, HasSubstr("int64"));
  m = error_of([&] { softmax(x, 2); });
  EXPECT_THAT(m, HasSubstr("axis 2"));
}

// -log_softmax(logits)[i, t_i], the definition cross_entropy fuses.
double nll(const Tensor& logp, int64_t i, int64_t t) { return -logp.at({i, t}); }

TEST(CrossEntropy, EqualsNegativeLogSoftmaxAtTheTargetAveraged) {
  std::vector<double> v = {0.2, -1.0, 1.5, 0.3, 2.0, 0.1, -0.5, 0.0, 0.7, 1.2, -0.3, 0.9};
  Tensor logits = leaf(v, {3, 4});
  Tensor target = from_indices({2, 0, 3}, {3});
  Tensor loss = cross_entropy(logits, target);
  Tensor logp = log_softmax(from_vector(v, {3, 4}, DType::F64), -1);
  EXPECT_EQ(loss.dim(), 0);
  EXPECT_NEAR(loss.item(), (nll(logp, 0, 2) + nll(logp, 1, 0) + nll(logp, 2, 3)) / 3, 1e-14);
  loss.backward();
  // d/dlogits = (softmax - onehot) / N.
  const int64_t t[] = {2, 0, 3};
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t c = 0; c < 4; ++c)
      EXPECT_NEAR(logits.grad().at({i, c}), (std::exp(logp.at({i, c})) - (c == t[i] ? 1.0 : 0.0)) / 3, 1e-15);

  CrossEntropyOptions none;
  none.reduction = Reduction::None;
  Tensor per = cross_entropy(from_vector(v, {3, 4}, DType::F64), target, none);
  EXPECT_EQ(per.shape(), (Shape{3}));
  EXPECT_NEAR(per.at({1}), nll(logp, 1, 0), 1e-14);
  CrossEntropyOptions summed;
  summed.reduction = Reduction::Sum;
  EXPECT_NEAR(cross_entropy(from_vector(v, {3, 4}, DType::F64), target, summed).item(),
              nll(logp, 0, 2) + nll(logp, 1, 0) + nll(logp, 2, 3), 1e-14);
}

TEST(CrossEntropy, ThreeDimensionalLogitsKeepTargetShape) {
  std::vector<double> v;
  for (int i = 0; i < 2 * 3 * 4; ++i) v.push_back(0.1 * ((i * 7) % 11) - 0.5);
  Tensor target = from_indices({0, 1, 2, 3, 2, 1}, {2, 3});
  CrossEntropyOptions none;
  none.reduction = Reduction::None;
  Tensor per = cross_entropy(from_vector(v, {2, 3, 4}, DType::F64), target, none);
  EXPECT_EQ(per.shape(), (Shape{2, 3}));
  Tensor logp = log_softmax(from_vector(v, {6, 4}, DType::F64), -1);
  EXPECT_NEAR(per.at({1, 2}), nll(logp, 5, 1), 1e-14);
  EXPECT_NEAR(per.at({0, 1}), nll(logp, 1, 1), 1e-14);
}

TEST(CrossEntropy, ClassWeightsAndIgnoreIndexMatchHandComputation) {
  std::vector<double> v = {0.2, -1.0, 1.5, 0.3, 2.0, 0.1, -0.5, 0.0, 0.7, 1.2, -0.3, 0.9};
  Tensor logits = leaf(v, {3, 4});
  CrossEntropyOptions o;
  o.class_weights = from_vector({0.5, 2.0, 1.0, 3.0}, {4}, DType::F64);
  o.ignore_index = 7;
  Tensor target = from_indices({1, 7, 3}, {3});
  Tensor loss = cross_entropy(logits, target, o);
  Tensor logp = log_softmax(from_vector(v, {3, 4}, DType::F64), -1);
  // Weighted mean over non-ignored rows: (2 * nll_0 + 3 * nll_2) / (2 + 3).
  EXPECT_NEAR(loss.item(), (2.0 * nll(logp, 0, 1) + 3.0 * nll(logp, 2, 3)) / 5.0, 1e-14);
  loss.backward();
  for (int64_t c = 0; c < 4; ++c) {
    EXPECT_EQ(logits.grad().at({1, c}), 0.0);  // ignored row
    EXPECT_NEAR(logits.grad().at({2, c}), 3.0 * (std::exp(logp.at({2, c})) - (c == 3 ? 1.0 : 0.0)) / 5.0, 1e-15);
  }
}

TEST(CrossEntropy, AllIgnoredGivesZeroAndZeroGradient) {
  Tensor logits = leaf({0.2, -1.0, 1.5, 0.3, 2.0, 0.1}, {2, 3});
  Tensor loss = cross_entropy(logits, from_indices({-100, -100}, {2}));
  EXPECT_EQ(loss.item(), 0.0);
  loss.backward();
  for (double g : logits.grad().to_vector()) EXPECT_EQ(g, 0.0);
}

TEST(CrossEntropy, LargeLogitsAreStableAndFloat32MatchesFloat64) {
  std::vector<double> big = {1000, 998.5, 1001.25, 999, -1000, 3, 0.5, 2};
  Tensor target = from_indices({1, 3}, {2});
  Tensor l64 = leaf(big, {2, 4}, DType::F64);
  Tensor l32 = leaf(big, {2, 4}, DType::F32);
  Tensor a = cross_entropy(l64, target);
  Tensor b = cross_entropy(l32, target);
  // Shifting a row by a constant leaves the loss unchanged.
  Tensor shifted = cross_entropy(from_vector({0, -1.5, 1.25, -1, -1000, 3, 0.5, 2}, {2, 4}, DType::F64), target);
  EXPECT_NEAR(a.item(), shifted.item(), 1e-12);
  EXPECT_NEAR(a.item(), b.item(), 1e-5);
  a.backward();
  b.backward();
  expect_all_finite(l32.grad());
  std::vector<double> ga = l64.grad().to_vector(), gb = l32.grad().to_vector();
  for (size_t i = 0; i < ga.size(); ++i) EXPECT_NEAR(ga[i], gb[i], 1e-5);
}

TEST(CrossEntropyErrors, BadTargetsShapesAndDtypesAreReported) {
  Tensor logits = zeros({2, 5});
  std::string m = error_of([&] { cross_entropy(logits, from_indices({1, 7}, {2})); });
  EXPECT_THAT(m, HasSubstr("cross_entropy"));
  EXPECT_THAT(m, HasSubstr("7"));
  EXPECT_THAT(m, HasSubstr("C = 5"));
  m = error_of([&] { cross_entropy(logits, from_indices({-3, 0}, {2})); });
  EXPECT_THAT(m, HasSubstr("-3"));
  m = error_of([&] { cross_entropy(logits, from_indices({1, 2, 3}, {3})); });
  EXPECT_THAT(m, HasSubstr("[3]"));
  EXPECT_THAT(m, HasSubstr("[2, 5]"));
  m = error_of([&] { cross_entropy(logits, zeros({2})); });
  EXPECT_THAT(m, HasSubstr("int64"));
  EXPECT_THAT(m, HasSubstr("float32"));
  CrossEntropyOptions o;
  o.class_weights = ones({4});
  m = error_of([&] { cross_entropy(logits, from_indices({1, 2}, {2}), o); });
  EXPECT_THAT(m, HasSubstr("class_weights"));
  EXPECT_THAT(m, HasSubstr("[4]"));
}

TEST(MseLoss, ValuesAndGradientsToBothInputs) {
  Tensor p = leaf({1.0, 2.0, -1.0, 0.5}, {2, 2});
  Tensor t = leaf({0.5, 2.5, 1.0, 0.5}, {2, 2});
  Tensor loss = mse_loss(p, t);
  EXPECT_NEAR(loss.item(), (0.25 + 0.25 + 4.0 + 0.0) / 4, 1e-15);
  loss.backward();
  std::vector<double> gp = p.grad().to_vector(), gt_ = t.grad().to_vector();
  const double expected[] = {0.25, -0.25, -1.0, 0.0};  // 2 (p - t) / 4
  for (int i = 0; i < 4; ++i) {
    EXPECT_NEAR(gp[i], expected[i], 1e-15);
    EXPECT_NEAR(gt_[i], -expected[i], 1e-15);
  }
  EXPECT_NEAR(mse_loss(p, t, Reduction::Sum).item(), 4.5, 1e-15);
  EXPECT_EQ(mse_loss(p, t, Reduction::None).shape(), (Shape{2, 2}));
}

TEST(MseLoss, ShapeAndDtypeMismatchAreErrors) {
  std::string m = error_of([] { mse_loss(zeros({2, 3}), zeros({3})); });
  EXPECT_THAT(m, HasSubstr("mse_loss"));
  EXPECT_THAT(m, HasSubstr("[2, 3]"));
  EXPECT_THAT(m, HasSubstr("[3]"));
  m = error_of([] { mse_loss(zeros({2}), zeros({2}, DType::F64)); });
  EXPECT_THAT(m, HasSubstr("float64"));
}

TEST(KlDiv, BatchmeanWithZeroTargetsMatchesHandComputation) {
  // Row 0: t = [0.25, 0.75, 0], log_pred = -inf at the zero target: no NaN.
  Tensor lp = leaf({std::log(0.5), std::log(0.5), -kInf, std::log(0.2), std::log(0.3), std::log(0.5)}, {2, 3});
  Tensor t = from_vector({0.25, 0.75, 0.0, 0.0, 0.5, 0.5}, {2, 3}, DType::F64);
  Tensor loss = kl_div(lp, t);
  const double row0 = 0.25 * std::log(0.25 / 0.5) + 0.75 * std::log(0.75 / 0.5);
  const double row1 = 0.5 * std::log(0.5 / 0.3) + 0.5 * std::log(0.5 / 0.5);
  EXPECT_NEAR(loss.item(), (row0 + row1) / 2, 1e-15);
  loss.backward();
  std::vector<double> g = lp.grad().to_vector(), tv = t.to_vector();
  for (size_t i = 0; i < g.size(); ++i) EXPECT_EQ(g[i], -tv[i] / 2);
  Tensor terms = kl_div(lp, t, Reduction::None);
  EXPECT_EQ(terms.at({0, 2}), 0.0);
  EXPECT_EQ(terms.at({1, 0}), 0.0);
  EXPECT_NEAR(kl_div(lp, t, Reduction::Sum).item(), row0 + row1, 1e-15);
  EXPECT_FALSE(t.grad().defined());
}

TEST(KlDiv, ShapeMismatchIsAnError) {
  std::string m = error_of([] { kl_div(zeros({2, 3}), zeros({3, 2})); });
  EXPECT_THAT(m, HasSubstr("kl_div"));
  EXPECT_THAT(m, HasSubstr("[3, 2]"));
}

}  // namespace
}  // namespace attn
