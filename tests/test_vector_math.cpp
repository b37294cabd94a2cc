// The branch-free float exp and tanh of ops/vector_math.h against the C
// library in double: relative error of a few float ulp over the whole range
// the kernels use, exact limits (0 far below, inf far above, +-1 at
// saturation) and NaN passed through.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "ops/vector_math.h"

namespace attn {
namespace {

constexpr double kFloatUlp = 1.1920928955078125e-07;  // 2^-23

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

TEST(VectorMath, ExpLimitsAndNan) {
  EXPECT_EQ(vector_math::exp(0.0f), 1.0f);
  EXPECT_EQ(vector_math::exp(-100.0f), 0.0f);
  EXPECT_EQ(vector_math::exp(-std::numeric_limits<float>::infinity()), 0.0f);
  EXPECT_EQ(vector_math::exp(100.0f), std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(vector_math::exp(std::numeric_limits<float>::quiet_NaN())));
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
  EXPECT_EQ(vector_math::tanh(50.0f), 1.0f);
  EXPECT_EQ(vector_math::tanh(-50.0f), -1.0f);
  EXPECT_EQ(vector_math::tanh(std::numeric_limits<float>::infinity()), 1.0f);
  EXPECT_EQ(vector_math::tanh(0.0f), 0.0f);
  EXPECT_EQ(vector_math::tanh(1e-20f), 1e-20f);
  EXPECT_EQ(vector_math::tanh(-0.3f), -vector_math::tanh(0.3f));
  EXPECT_TRUE(std::isnan(vector_math::tanh(std::numeric_limits<float>::quiet_NaN())));
}

}  // namespace
}  // namespace attn
