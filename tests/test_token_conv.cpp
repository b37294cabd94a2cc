// The token convolution (ops/token_conv) against a direct loop written from
// its definition, in float64; padded tokens (NaN and Inf there) change
// nothing; outputs at padded tokens are exactly zero; float32 agrees with
// float64 within the rounding of its sums; shape errors name the shapes.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "attn/engine/copy.h"
#include "attn/engine/random.h"
#include "attn/models/masks.h"
#include "attn/ops/registry.h"
#include "attn/ops/token_conv/token_conv.h"
#include "attn/ops/unary/unary.h"

namespace attn {
namespace {

// y[b, t, o] = bias[o] + sum_j sum_i x[b, t + j - (k - 1) / 2, i] w[j, i, o],
// taps that leave the sentence or land on a padded token skipped; 0 at
// padded t.
std::vector<double> reference(const Tensor& x, const Tensor& mask, const Tensor& w, const Tensor& bias) {
  const int64_t B = x.size(0), n = x.size(1), din = x.size(2), k = w.size(0), dout = w.size(2);
  const int64_t left = (k - 1) / 2;
  auto valid = [&](int64_t b, int64_t t) { return !mask.defined() || mask.at({b, t}) != 0; };
  std::vector<double> y(static_cast<size_t>(B * n * dout), 0.0);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < n; ++t) {
      if (!valid(b, t)) continue;
      for (int64_t o = 0; o < dout; ++o) {
        double acc = bias.defined() ? bias.at({o}) : 0.0;
        for (int64_t j = 0; j < k; ++j) {
          const int64_t s = t + j - left;
          if (s < 0 || s >= n || !valid(b, s)) continue;
          for (int64_t i = 0; i < din; ++i) acc += x.at({b, s, i}) * w.at({j, i, o});
        }
        y[static_cast<size_t>((b * n + t) * dout + o)] = acc;
      }
    }
  return y;
}

void expect_near_all(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "at flat index " << i;
}

TEST(TokenConv, MatchesTheDefinitionForOddAndEvenWidths) {
  Generator g(7);
  const Tensor mask = length_mask({6, 0, 1, 3}, 6);
  for (int64_t k : {1, 2, 3, 4, 5, 8}) {
    const Tensor x = rand_uniform({4, 6, 5}, -1, 1, g, DType::F64);
    const Tensor w = rand_uniform({k, 5, 3}, -1, 1, g, DType::F64);
    const Tensor bias = rand_uniform({3}, -1, 1, g, DType::F64);
    // Each output sums at most k * 5 products of magnitude <= 1 (plus a
    // bias) in some order: double rounding is below 1e-14 of that.
    expect_near_all(token_conv(x, mask, w, bias).to_vector(), reference(x, mask, w, bias), 1e-12);
    expect_near_all(token_conv(x, Tensor(), w, Tensor()).to_vector(), reference(x, Tensor(), w, Tensor()), 1e-12);
  }
}

TEST(TokenConv, PaddedTokensChangeNothingAndOutputZero) {
  Generator g(11);
  const Tensor mask = samples::u8_mask({1, 1, 0, 1, 0, 1, 1, 0, 0, 0}, {2, 5});  // a gap, a one-token sentence
  const Tensor x = rand_uniform({2, 5, 4}, -1, 1, g, DType::F64).set_requires_grad(true);
  const Tensor w = rand_uniform({3, 4, 2}, -1, 1, g, DType::F64);
  const Tensor bias = rand_uniform({2}, -1, 1, g, DType::F64);
  const Tensor dirty = clone(x.detach()).set_requires_grad(true);
  const double poison[] = {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                           -std::numeric_limits<double>::infinity(), 1e300};
  int p = 0;
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t t = 0; t < 5; ++t)
      if (mask.at({b, t}) == 0)
        for (int64_t i = 0; i < 4; ++i) write_element(dirty, (b * 5 + t) * 4 + i, poison[p++ % 4]);
  const Tensor clean_y = token_conv(x, mask, w, bias), dirty_y = token_conv(dirty, mask, w, bias);
  const std::vector<double> a = clean_y.to_vector(), c = dirty_y.to_vector();
  ASSERT_EQ(a.size(), c.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i], c[i]) << "at flat index " << i;  // same kernel, same inputs
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t t = 0; t < 5; ++t)
      for (int64_t o = 0; o < 2; ++o)
        if (mask.at({b, t}) == 0) {
          EXPECT_EQ(clean_y.at({b, t, o}), 0.0);
        }
  Generator gg(3);
  const Tensor seed = rand_uniform(clean_y.shape(), -1, 1, gg, DType::F64);
  dirty_y.backward(seed);
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t t = 0; t < 5; ++t)
      for (int64_t i = 0; i < 4; ++i) {
        const double v = dirty.grad().at({b, t, i});
        EXPECT_TRUE(std::isfinite(v));
        if (mask.at({b, t}) == 0) {
          EXPECT_EQ(v, 0.0);
        }
      }
}

TEST(TokenConv, EmptyBatchesAndSentences) {
  Generator g(13);
  const Tensor w = rand_uniform({5, 3, 2}, -1, 1, g, DType::F64);
  EXPECT_EQ(token_conv(rand_uniform({0, 4, 3}, -1, 1, g, DType::F64), Tensor(), w).shape(), Shape({0, 4, 2}));
  EXPECT_EQ(token_conv(rand_uniform({2, 0, 3}, -1, 1, g, DType::F64), length_mask({0, 0}, 0), w).shape(),
            Shape({2, 0, 2}));
  // One token: only the centre tap reads anything.
  const Tensor x = rand_uniform({1, 1, 3}, -1, 1, g, DType::F64);
  expect_near_all(token_conv(x, Tensor(), w).to_vector(), reference(x, Tensor(), w, Tensor()), 1e-14);
}

TEST(TokenConv, Float32AgreesWithFloat64AndStaysFinite) {
  Generator g(17);
  const Tensor x = rand_uniform({3, 9, 16}, -1, 1, g, DType::F64);
  const Tensor w = rand_uniform({4, 16, 8}, -1, 1, g, DType::F64);
  const Tensor mask = length_mask({9, 4, 1}, 9);
  const std::vector<double> want = reference(x, mask, w, Tensor());
  const std::vector<double> got = token_conv(cast(x, DType::F32), mask, cast(w, DType::F32)).to_vector();
  // 64 products of magnitude <= 1 each, float32 rounding of each partial
  // sum (2^-24 relative): 64 * 64 * 2^-24 bounds the error loosely.
  expect_near_all(got, want, 64.0 * 64.0 / (1 << 24));
  // Extreme but finite inputs stay finite: inputs near 1e18 against weights
  // near 1e-2, 64 products summed, stay far below FLT_MAX (3.4e38).
  const Tensor big = cast(mul_scalar(x, 1e18), DType::F32);
  for (double v : token_conv(big, mask, cast(mul_scalar(w, 1e-2), DType::F32)).to_vector())
    EXPECT_TRUE(std::isfinite(v));
}

TEST(TokenConv, ErrorsNameTheShapes) {
  Generator g(19);
  const Tensor x = rand_uniform({2, 3, 4}, -1, 1, g, DType::F64);
  try {
    token_conv(x, Tensor(), rand_uniform({3, 5, 2}, -1, 1, g, DType::F64));
    FAIL() << "expected an error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("[3, 5, 2]"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("[2, 3, 4]"), std::string::npos) << e.what();
  }
  EXPECT_THROW(token_conv(x, length_mask({1, 2, 3}, 3), rand_uniform({3, 4, 2}, -1, 1, g, DType::F64)), std::exception);
  EXPECT_THROW(token_unfold(x, Tensor(), 0), std::exception);
}

}  // namespace
}  // namespace attn
