// The fused softmax pooling (ops/softmax_pool/softmax_pool.h) against the composed form
// it replaces in source2token (a masked softmax along the tokens, then
// sum(p * values)): values and gradients in float64, float32 against
// float64, masked entries that hold NaN, empty examples, a NaN at a valid
// token, and clear errors for bad operands.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "attn/engine/copy.h"
#include "attn/models/masks.h"
#include "attn/ops/binary/binary.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/ops/softmax/softmax.h"
#include "attn/ops/softmax_pool/softmax_pool.h"
#include "attn/ops/view/view.h"
#include "model_checks.h"
#include "test_util.h"

namespace attn {
namespace {

using ::testing::HasSubstr;
using namespace testing_support;

struct PoolRun {
  Tensor out, grad_scores, grad_values;
};

// out and the gradients of sum(out * weights), fused or composed.
PoolRun run_pool(bool fused, const Tensor& scores, const Tensor& values, const Tensor& mask, const Tensor& weights) {
  Tensor s = scores.detach().set_requires_grad(true), v = values.detach().set_requires_grad(true);
  Tensor out = fused ? softmax_pool(s, v, mask) : sum(softmax(s, 1, unsqueeze(mask, -1)) * v, {1});
  sum(out * weights).backward();
  return {out.detach(), s.grad(), v.grad()};
}

// Three examples run as 70-feature rows cut in two slices; eighteen (enough
// for a task per example) as whole rows: both against the composed form.
TEST(SoftmaxPool, MatchesTheComposedSoftmaxAndSumWithAnEmptyExample) {
  for (const int64_t B : {3, 18}) {
    SCOPED_TRACE("batch " + std::to_string(B));
    const int64_t n = 7, d = 70;
    std::vector<int64_t> lengths;
    for (int64_t b = 0; b < B; ++b) lengths.push_back(b % 3 == 0 ? 7 : b % 3 == 1 ? 3 : 0);
    Tensor mask = length_mask(lengths, n);
    Tensor scores = mul(random_input({B, n, d}, 1), full({}, 3.0, DType::F64)).detach();
    Tensor values = random_input({B, n, d}, 2).detach(), weights = random_input({B, d}, 3).detach();
    PoolRun fused = run_pool(true, scores, values, mask, weights);
    PoolRun composed = run_pool(false, scores, values, mask, weights);
    // Sums of n terms of size <= 1 in float64: a few roundings each.
    EXPECT_LT(max_abs_diff(fused.out, composed.out), 1e-14);
    EXPECT_LT(max_abs_diff(fused.grad_scores, composed.grad_scores), 1e-14);
    EXPECT_LT(max_abs_diff(fused.grad_values, composed.grad_values), 1e-14);
    EXPECT_GT(max_abs(fused.grad_scores), 1e-3);
    EXPECT_GT(max_abs(fused.grad_values), 1e-3);
    // The empty example: zeros out, no gradient.
    EXPECT_EQ(max_abs(narrow(fused.out, 0, 2, 1)), 0.0);
    EXPECT_EQ(max_abs(narrow(fused.grad_scores, 0, 2, 1)), 0.0);
    EXPECT_EQ(max_abs(narrow(fused.grad_values, 0, 2, 1)), 0.0);
  }
}

// Each output is a weighted mean of n values of size <= 1 and each gradient
// a product of a few such terms, each a few float32 roundings off: the
// bound is 8 roundings per token.
TEST(SoftmaxPool, Float32MatchesFloat64) {
  const int64_t B = 2, n = 9, d = 33;
  Tensor mask = length_mask({9, 5}, n);
  Tensor scores = mul(random_input({B, n, d}, 4), full({}, 4.0, DType::F64)).detach();
  Tensor values = random_input({B, n, d}, 5).detach(), weights = random_input({B, d}, 6).detach();
  PoolRun ref = run_pool(true, scores, values, mask, weights);
  PoolRun got = run_pool(true, cast(scores, DType::F32), cast(values, DType::F32), mask, cast(weights, DType::F32));
  const double bound = 8 * n * std::ldexp(1.0, -24);
  EXPECT_EQ(got.out.dtype(), DType::F32);
  EXPECT_LT(max_abs_diff(cast(got.out, DType::F64), ref.out), bound);
  EXPECT_LT(max_abs_diff(cast(got.grad_scores, DType::F64), ref.grad_scores), bound);
  EXPECT_LT(max_abs_diff(cast(got.grad_values, DType::F64), ref.grad_values), bound);
}

// Masked entries are selected out, never multiplied by a zero weight: NaN
// and inf there change nothing, and their gradients are exactly 0. Valid
// scores all -inf give 0 like an empty example.
TEST(SoftmaxPool, MaskedNaNStaysOutAndAllMinusInfinityGivesZero) {
  for (DType dt : {DType::F64, DType::F32}) {
    const int64_t B = 2, n = 4, d = 3;
    Tensor mask = length_mask({2, 4}, n);
    Tensor scores = cast(random_input({B, n, d}, 7), dt).detach(),
           values = cast(random_input({B, n, d}, 8), dt).detach();
    Tensor clean = softmax_pool(scores, values, mask);
    const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
    for (int64_t f = 0; f < d; ++f) {
      write_element(scores, (0 * n + 2) * d + f, nan);  // example 0, token 2: masked
      write_element(values, (0 * n + 3) * d + f, inf);  // example 0, token 3: masked
      for (int64_t t = 0; t < n; ++t) write_element(scores, (1 * n + t) * d + f, f == 0 ? -inf : 0.5);
    }
    PoolRun r = run_pool(true, scores, values, mask, ones({B, d}, dt));
    for (int64_t f = 0; f < d; ++f) EXPECT_EQ(r.out.at({0, f}), clean.at({0, f})) << dtype_name(dt);
    EXPECT_EQ(r.out.at({1, 0}), 0.0) << "all -inf: " << dtype_name(dt);
    for (int64_t t = 2; t < n; ++t)
      for (int64_t f = 0; f < d; ++f) {
        EXPECT_EQ(r.grad_scores.at({0, t, f}), 0.0) << dtype_name(dt);
        EXPECT_EQ(r.grad_values.at({0, t, f}), 0.0) << dtype_name(dt);
      }
    for (int64_t t = 0; t < n; ++t) EXPECT_EQ(r.grad_values.at({1, t, 0}), 0.0) << dtype_name(dt);
    EXPECT_TRUE(std::isfinite(max_abs(r.grad_scores)) && std::isfinite(max_abs(r.grad_values))) << dtype_name(dt);
    EXPECT_GT(max_abs(r.grad_values), 1e-3) << dtype_name(dt);
  }
}

// Garbage in at a valid token is not hidden: a NaN score or value there
// gives a NaN output (anomaly detection reports it).
TEST(SoftmaxPool, NaNAtAValidTokenReachesTheOutput) {
  for (DType dt : {DType::F64, DType::F32}) {
    for (bool in_scores : {true, false}) {
      Tensor scores = cast(random_input({1, 3, 2}, 9), dt).detach(),
             values = cast(random_input({1, 3, 2}, 10), dt).detach();
      write_element(in_scores ? scores : values, 2 * 2,
                    std::numeric_limits<double>::quiet_NaN());  // token 2, feature 0
      Tensor out = softmax_pool(scores, values, ones({1, 3}, DType::U8));
      EXPECT_TRUE(std::isnan(out.at({0, 0}))) << dtype_name(dt) << (in_scores ? " score" : " value");
      EXPECT_TRUE(std::isfinite(out.at({0, 1}))) << dtype_name(dt);
    }
  }
}

TEST(SoftmaxPool, RejectsBadOperands) {
  Tensor s = zeros({2, 3, 4}), v = zeros({2, 3, 4});
  EXPECT_THAT(error_of([&] { softmax_pool(zeros({2, 3}), zeros({2, 3})); }), HasSubstr("[B, n, d]"));
  EXPECT_THAT(error_of([&] { softmax_pool(s, zeros({2, 3, 5})); }), HasSubstr("do not match scores"));
  EXPECT_THAT(error_of([&] { softmax_pool(s, zeros({2, 3, 4}, DType::F64)); }), HasSubstr("values are float64"));
  EXPECT_THAT(error_of([&] { softmax_pool(s, v, ones({2, 4}, DType::U8)); }), HasSubstr("mask must be uint8 [2, 3]"));
  EXPECT_THAT(error_of([&] { softmax_pool(s, v, ones({2, 3})); }), HasSubstr("mask must be uint8"));
  EXPECT_THAT(error_of([&] { softmax_pool(zeros({2, 3, 4}, DType::U8), v); }), HasSubstr("softmax_pool"));
}

}  // namespace
}  // namespace attn
