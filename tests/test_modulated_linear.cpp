// The modulated linear map (ops/modulated_linear/modulated_linear.h) against the composed
// form it replaces in ReSAN's selection network, linear(x, W) +
// linear(x * s, V): values and all four gradients in float64 at a size the
// CPU kernel splits over threads, float32 against float64, a backward that
// needs only some gradients, sentences without tokens, determinism, and
// clear errors for bad operands.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "attn/engine/copy.h"
#include "attn/ops/binary/binary.h"
#include "attn/ops/matmul/matmul.h"
#include "attn/ops/modulated_linear/modulated_linear.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/ops/view/view.h"
#include "model_checks.h"
#include "test_util.h"

namespace attn {
namespace {

using ::testing::HasSubstr;
using namespace testing_support;

struct Operands {
  Tensor x, scale, weight, scaled_weight, out_weights;
};

// Entries of every operand in [-1, 1).
Operands random_operands(int64_t B, int64_t n, int64_t d, int64_t h, uint64_t seed) {
  return {random_input({B, n, d}, seed).detach(), random_input({B, d}, seed + 1).detach(),
          random_input({h, d}, seed + 2).detach(), random_input({h, d}, seed + 3).detach(),
          random_input({B, n, h}, seed + 4).detach()};
}

Operands cast_all(const Operands& o, DType dtype) {
  return {cast(o.x, dtype), cast(o.scale, dtype), cast(o.weight, dtype), cast(o.scaled_weight, dtype),
          cast(o.out_weights, dtype)};
}

struct Result {
  Tensor out, grad_x, grad_scale, grad_weight, grad_scaled_weight;
};

// out and the gradients of sum(out * out_weights) for the operands marked in
// `needs` (x, scale, weight, scaled_weight), fused or composed.
Result run(bool fused, const Operands& o, std::array<bool, 4> needs = {true, true, true, true}) {
  Tensor x = o.x.detach().set_requires_grad(needs[0]), s = o.scale.detach().set_requires_grad(needs[1]);
  Tensor w = o.weight.detach().set_requires_grad(needs[2]), v = o.scaled_weight.detach().set_requires_grad(needs[3]);
  Tensor out = fused ? modulated_linear(x, s, w, v) : linear(x, w) + linear(x * unsqueeze(s, 1), v);
  sum(out * o.out_weights).backward();
  return {out.detach(), x.grad(), s.grad(), w.grad(), v.grad()};
}

// Every output and gradient entry is a sum of at most k products of
// operands in [-1, 1) (the scale's factor included, so each term is at most
// 2 in size): k = max(2d, 2h, B n, n h). Either order of summation is within
// k u of the exact sum times its k terms of size <= 2, so two orders differ
// by at most 4 k^2 u.
double sum_bound(int64_t B, int64_t n, int64_t d, int64_t h, double unit_roundoff) {
  const double k = static_cast<double>(std::max({2 * d, 2 * h, B * n, n * h}));
  return 4 * k * k * unit_roundoff;
}

void expect_runs_match(const Result& got, const Result& ref, double bound) {
  EXPECT_LT(max_abs_diff(cast(got.out, DType::F64), ref.out), bound);
  EXPECT_LT(max_abs_diff(cast(got.grad_x, DType::F64), ref.grad_x), bound);
  EXPECT_LT(max_abs_diff(cast(got.grad_scale, DType::F64), ref.grad_scale), bound);
  EXPECT_LT(max_abs_diff(cast(got.grad_weight, DType::F64), ref.grad_weight), bound);
  EXPECT_LT(max_abs_diff(cast(got.grad_scaled_weight, DType::F64), ref.grad_scaled_weight), bound);
}

// B n d h = 276480 multiply-adds, above kSmallGemmWork: the CPU kernel
// splits the sentences over its threads.
TEST(ModulatedLinear, MatchesTheComposedFormWithAllGradients) {
  const int64_t B = 8, n = 24, d = 40, h = 36;
  const Operands o = random_operands(B, n, d, h, 11);
  const Result fused = run(true, o), composed = run(false, o);
  expect_runs_match(fused, composed, sum_bound(B, n, d, h, std::ldexp(1.0, -53)));
  for (const Tensor& g : {fused.grad_x, fused.grad_scale, fused.grad_weight, fused.grad_scaled_weight})
    EXPECT_GT(max_abs(g), 1e-2);
}

// The float64 reference runs on the float32 operands, so only the kernel's
// own float32 roundings are measured.
TEST(ModulatedLinear, Float32MatchesFloat64) {
  const int64_t B = 3, n = 5, d = 6, h = 4;
  const Operands o32 = cast_all(random_operands(B, n, d, h, 21), DType::F32);
  const Result got = run(true, o32), ref = run(true, cast_all(o32, DType::F64));
  EXPECT_EQ(got.out.dtype(), DType::F32);
  expect_runs_match(got, ref, sum_bound(B, n, d, h, std::ldexp(1.0, -24)));
}

TEST(ModulatedLinear, ComputesOnlyTheGradientsThatAreNeeded) {
  const int64_t B = 4, n = 7, d = 5, h = 6;
  const Operands o = random_operands(B, n, d, h, 31);
  const Result all = run(true, o);
  const double bound = sum_bound(B, n, d, h, std::ldexp(1.0, -53));
  const Result weights_only = run(true, o, {false, false, true, true});
  EXPECT_FALSE(weights_only.grad_x.defined());
  EXPECT_FALSE(weights_only.grad_scale.defined());
  EXPECT_LT(max_abs_diff(weights_only.grad_weight, all.grad_weight), bound);
  EXPECT_LT(max_abs_diff(weights_only.grad_scaled_weight, all.grad_scaled_weight), bound);
  const Result x_only = run(true, o, {true, false, false, false});
  EXPECT_FALSE(x_only.grad_weight.defined());
  EXPECT_LT(max_abs_diff(x_only.grad_x, all.grad_x), bound);
  const Result scale_only = run(true, o, {false, true, false, false});
  EXPECT_LT(max_abs_diff(scale_only.grad_scale, all.grad_scale), bound);
}

TEST(ModulatedLinear, SentencesWithoutTokensGiveZeroGradients) {
  const Operands o = random_operands(2, 0, 3, 4, 41);
  const Result r = run(true, o);
  EXPECT_EQ(r.out.shape(), Shape({2, 0, 4}));
  EXPECT_EQ(r.grad_x.shape(), Shape({2, 0, 3}));
  EXPECT_EQ(max_abs(r.grad_scale), 0.0);
  EXPECT_EQ(max_abs(r.grad_weight), 0.0);
  EXPECT_EQ(max_abs(r.grad_scaled_weight), 0.0);
}

// One path run twice: the per-thread sums are added in a fixed order.
TEST(ModulatedLinear, IsDeterministic) {
  const Operands o = cast_all(random_operands(8, 24, 40, 36, 51), DType::F32);
  const Result a = run(true, o), b = run(true, o);
  EXPECT_EQ(max_abs_diff(a.out, b.out), 0.0);
  EXPECT_EQ(max_abs_diff(a.grad_x, b.grad_x), 0.0);
  EXPECT_EQ(max_abs_diff(a.grad_scale, b.grad_scale), 0.0);
  EXPECT_EQ(max_abs_diff(a.grad_weight, b.grad_weight), 0.0);
  EXPECT_EQ(max_abs_diff(a.grad_scaled_weight, b.grad_scaled_weight), 0.0);
}

TEST(ModulatedLinear, RejectsBadOperands) {
  const Tensor x = zeros({2, 3, 4}), s = zeros({2, 4}), w = zeros({5, 4});
  EXPECT_THAT(error_of([&] { modulated_linear(zeros({3, 4}), s, w, w); }), HasSubstr("x must be"));
  EXPECT_THAT(error_of([&] { modulated_linear(x, zeros({2, 3}), w, w); }), HasSubstr("scale must be [2, 4]"));
  EXPECT_THAT(error_of([&] { modulated_linear(x, zeros({1, 4}), w, w); }), HasSubstr("scale must be [2, 4]"));
  EXPECT_THAT(error_of([&] { modulated_linear(x, s, zeros({5, 3}), w); }), HasSubstr("weight must be [h, 4]"));
  EXPECT_THAT(error_of([&] { modulated_linear(x, s, w, zeros({6, 4})); }), HasSubstr("scaled_weight must match"));
  EXPECT_THAT(error_of([&] { modulated_linear(x, s, w, zeros({5, 4}, DType::F64)); }), HasSubstr("share x's dtype"));
  EXPECT_THAT(error_of([&] {
                modulated_linear(zeros({2, 3, 4}, DType::U8), s, w, w);
              }),
              HasSubstr("float32 or float64"));
}

}  // namespace
}  // namespace attn
