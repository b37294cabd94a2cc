// The branch-free float exp, log and tanh of ops/cpu/vector_math.h against the C
// library in double: relative error of a few float ulp over the whole range
// the kernels use, exact limits (0 far below, inf far above, +-1 at
// saturation) and NaN passed through.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "attn/ops/cpu/vector_math.h"

namespace attn {
namespace {

constexpr double kFloatUlp = 1.1920928955078125e-07;  // 2^-23

// The limit tests go through a volatile so that the compiled code runs on
// them; with literal arguments GCC folds the whole call at compile time and
// the test would check its constant folder instead.
float opaque(float x) {
  volatile float v = x;
  return v;
}
float exp_at(float x) { return vector_math::exp(opaque(x)); }
float log_at(float x) { return vector_math::log(opaque(x)); }
float tanh_at(float x) { return vector_math::tanh(opaque(x)); }

// NaN by its bits, independent of how std::isnan is compiled.
bool is_nan_bits(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return (bits & 0x7fffffffu) > 0x7f800000u;
}

TEST(VectorMath, ExpIsWithinFourUlpOverTheNormalRange) {
  double worst = 0;
  for (int64_t i = 0; i <= 400000; ++i) {
    const float x = static_cast<float>(-87.0 + 175.0 * static_cast<double>(i) / 400000.0);
    const double ref = std::exp(static_cast<double>(x));
    const double rel = std::abs(static_cast<double>(vector_math::exp(x)) - ref) / ref;
    worst = std::max(worst, rel);
  }
  EXPECT_LT(worst, 4 * kFloatUlp) << "worst relative error " << worst;
  EXPECT_GT(worst, 0.0);  // it is an approximation: a zero would mean the test compared the library with itself
}

// The float64 exp that float32 kernels use for products of two exps rounded
// once: a few float64 ulp over the range they use it on (and beyond).
TEST(VectorMath, ExpF64IsWithinFourDoubleUlp) {
  const double double_ulp = std::ldexp(1.0, -52);
  double worst = 0;
  for (int64_t i = 0; i <= 400000; ++i) {
    const double x = -700.0 + 1400.0 * static_cast<double>(i) / 400000.0;
    const double ref = std::exp(x);
    worst = std::max(worst, std::abs(vector_math::exp_f64_in_range(x) - ref) / ref);
  }
  EXPECT_LT(worst, 4 * double_ulp) << "worst relative error " << worst;
  EXPECT_EQ(vector_math::exp_f64_in_range(0.0), 1.0);
}

// Degree 8, what float32 kernels use for their factors. Taylor's remainder
// relative to e^r is at most e^|r| |r|^9 / 9!, with |r| <= ln(2) / 2:
// sqrt(2) (ln 2 / 2)^9 / 9! = 2.8e-10, far below a float32 ulp, and clearly
// coarser than degree 13 (so the test is of the degree-8 polynomial).
TEST(VectorMath, ExpF64AtDegreeEightIsWithinItsTruncationBound) {
  double worst = 0;
  for (int64_t i = 0; i <= 400000; ++i) {
    const double x = -700.0 + 1400.0 * static_cast<double>(i) / 400000.0;
    const double ref = std::exp(x);
    worst = std::max(worst, std::abs(vector_math::exp_f64_in_range<8>(x) - ref) / ref);
  }
  const double half_ln2 = 0.5 * std::log(2.0);
  const double bound = std::sqrt(2.0) * std::pow(half_ln2, 9) / 362880.0 + 8 * std::ldexp(1.0, -52);
  EXPECT_LT(worst, bound) << "worst relative error " << worst;
  EXPECT_GT(worst, 1e-12) << "no coarser than degree 13: is the degree-8 polynomial what runs?";
  EXPECT_LT(worst, kFloatUlp / 100);
}

TEST(VectorMath, ExpLimitsAndNan) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(exp_at(0.0f), 1.0f);
  EXPECT_EQ(exp_at(-100.0f), 0.0f);
  EXPECT_EQ(exp_at(-inf), 0.0f);
  EXPECT_EQ(exp_at(100.0f), inf);
  EXPECT_EQ(exp_at(inf), inf);
  const float nan_result = exp_at(std::numeric_limits<float>::quiet_NaN());
  EXPECT_TRUE(is_nan_bits(nan_result)) << "exp(NaN) = " << nan_result;
  EXPECT_FALSE(vector_math::is_nan(opaque(inf)));
  EXPECT_TRUE(vector_math::is_nan(opaque(-std::numeric_limits<float>::quiet_NaN())));
}

// Relative to the float64 library's log of the same float, over the whole
// positive range (subnormals included, log-spaced) and densely around 1,
// where log x ~ x - 1 and a careless form would cancel.
TEST(VectorMath, LogIsWithinTwoUlpOverThePositiveRange) {
  double worst = 0;
  auto check = [&](float x) {
    const double ref = std::log(static_cast<double>(x));
    if (ref == 0) {
      EXPECT_EQ(vector_math::log(x), 0.0f);
      return;
    }
    worst = std::max(worst, std::abs(static_cast<double>(vector_math::log(x)) - ref) / std::abs(ref));
  };
  for (int64_t i = 0; i <= 400000; ++i)
    check(static_cast<float>(std::exp(-103.0 + 191.0 * static_cast<double>(i) / 400000.0)));
  for (int64_t i = -200000; i <= 200000; ++i) check(1.0f + static_cast<float>(i) * 1e-6f);
  EXPECT_LT(worst, 2 * kFloatUlp) << "worst relative error " << worst;
  EXPECT_GT(worst, 0.0);  // an approximation: zero would mean the library was compared with itself
}

TEST(VectorMath, LogLimitsAndNan) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(log_at(1.0f), 0.0f);
  EXPECT_EQ(log_at(0.0f), -inf);
  EXPECT_EQ(log_at(-0.0f), -inf);
  EXPECT_EQ(log_at(inf), inf);
  EXPECT_TRUE(is_nan_bits(log_at(-1.0f)));
  EXPECT_TRUE(is_nan_bits(log_at(-inf)));
  EXPECT_TRUE(is_nan_bits(log_at(std::numeric_limits<float>::quiet_NaN())));
  // The extremes: the smallest subnormal (log -103.3) and the largest float (88.7).
  const float tiny = std::numeric_limits<float>::denorm_min(), huge = std::numeric_limits<float>::max();
  EXPECT_NEAR(log_at(tiny), std::log(static_cast<double>(tiny)), 2 * kFloatUlp * 104);
  EXPECT_NEAR(log_at(huge), std::log(static_cast<double>(huge)), 2 * kFloatUlp * 89);
}

TEST(VectorMath, TanhIsWithinFourUlpPlusATinyAbsoluteError) {
  double worst = 0;
  for (int64_t i = 0; i <= 400000; ++i) {
    const float x = static_cast<float>(-12.0 + 24.0 * static_cast<double>(i) / 400000.0);
    const double ref = std::tanh(static_cast<double>(x));
    const double err = std::abs(static_cast<double>(vector_math::tanh(x)) - ref);
    worst = std::max(worst, err / (std::abs(ref) + 1e-30));
    ASSERT_LE(err, 4 * kFloatUlp * std::abs(ref) + 1e-9) << "x = " << x;
  }
  EXPECT_GT(worst, 0.0);
}

TEST(VectorMath, TanhSaturatesOddAndKeepsTinyValues) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(tanh_at(50.0f), 1.0f);
  EXPECT_EQ(tanh_at(-50.0f), -1.0f);
  EXPECT_EQ(tanh_at(inf), 1.0f);
  EXPECT_EQ(tanh_at(-inf), -1.0f);
  EXPECT_EQ(tanh_at(0.0f), 0.0f);
  EXPECT_EQ(tanh_at(1e-20f), 1e-20f);
  EXPECT_EQ(tanh_at(-0.3f), -tanh_at(0.3f));
  const float nan_result = tanh_at(std::numeric_limits<float>::quiet_NaN());
  EXPECT_TRUE(is_nan_bits(nan_result)) << "tanh(NaN) = " << nan_result;
}

TEST(VectorMath, SigmoidIsWithinFourUlpAndSaturatesExactly) {
  double worst = 0;
  for (int64_t i = 0; i <= 400000; ++i) {
    const float x = static_cast<float>(-80.0 + 160.0 * static_cast<double>(i) / 400000.0);
    const double ref = 1.0 / (1.0 + std::exp(-static_cast<double>(x)));
    const double rel = std::abs(static_cast<double>(vector_math::sigmoid(x)) - ref) / ref;
    worst = std::max(worst, rel);
  }
  EXPECT_LT(worst, 4 * kFloatUlp) << "worst relative error " << worst;
  EXPECT_GT(worst, 0.0);
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(vector_math::sigmoid(opaque(0.0f)), 0.5f);
  EXPECT_EQ(vector_math::sigmoid(opaque(1000.0f)), 1.0f);
  EXPECT_EQ(vector_math::sigmoid(opaque(-1000.0f)), 0.0f);
  EXPECT_EQ(vector_math::sigmoid(opaque(inf)), 1.0f);
  EXPECT_EQ(vector_math::sigmoid(opaque(-inf)), 0.0f);
  EXPECT_TRUE(is_nan_bits(vector_math::sigmoid(opaque(std::numeric_limits<float>::quiet_NaN()))));
}

}  // namespace
}  // namespace attn
