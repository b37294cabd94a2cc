// linear_sum (ops/matmul/matmul_fused.h): the sum of linear maps of several inputs, one
// GEMM per term accumulating into one output. Checked against the layer over
// the concatenated input (the function it replaces in the fusion gates),
// forward and backward, at a size the CPU GEMMs thread; float32 against
// float64; and its errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <utility>
#include <vector>

#include "attn/engine/copy.h"
#include "attn/engine/random.h"
#include "attn/ops/binary/binary.h"
#include "attn/ops/join/join.h"
#include "attn/ops/matmul/matmul.h"
#include "attn/ops/matmul/matmul_fused.h"
#include "attn/ops/view/view.h"
#include "test_util.h"

namespace attn {
namespace {

using ::testing::HasSubstr;
using namespace testing_support;

// x1 [B, n, 40] and x2 [B, n, 24] against one weight [out, 64] whose column
// views are the two terms' weights. The first term's GEMM (192 rows x 40 x
// 48 multiply-adds) is above the size at which the CPU splits a GEMM over
// threads, the second's (x 24) below it.
struct Problem {
  static constexpr int64_t B = 4, n = 48, in1 = 40, in2 = 24, out = 48;
  Tensor x1, x2, w, b, g;
  explicit Problem(DType dt) {
    Generator gen(17);
    x1 = rand_uniform({B, n, in1}, -1, 1, gen, dt);
    x2 = rand_uniform({B, n, in2}, -1, 1, gen, dt);
    w = rand_uniform({out, in1 + in2}, -1, 1, gen, dt);
    b = rand_uniform({out}, -1, 1, gen, dt);
    g = rand_uniform({B, n, out}, -1, 1, gen, dt);
  }
};

struct Outcome {
  Tensor out, gx1, gx2, gw, gb;
};

Tensor leaf(const Tensor& t) { return t.detach().set_requires_grad(true); }

// By linear_sum on column views of w, or by linear on the concatenation.
Outcome run(const Problem& p, bool fused) {
  Tensor x1 = leaf(p.x1), x2 = leaf(p.x2), w = leaf(p.w), b = leaf(p.b);
  Tensor out = fused
                   ? linear_sum({x1, x2}, {narrow(w, 1, 0, Problem::in1), narrow(w, 1, Problem::in1, Problem::in2)}, b)
                   : linear(concat({x1, x2}, -1), w, b);
  out.backward(p.g);
  return {out, x1.grad(), x2.grad(), w.grad(), b.grad()};
}

// Each entry is a sum of k products of operands in [-1, 1): k = in1 + in2
// (+1, the bias) for the output, out for x's gradients, B n for w's and b's.
// Either order of summation is within k u of the exact sum times its k terms
// of size <= 1, so two orders differ by at most 2 k^2 u.
void expect_close(const Outcome& got, const Outcome& want, double unit_roundoff, const char* what) {
  auto bound = [unit_roundoff](double k) { return 2 * k * k * unit_roundoff; };
  const double k_out = Problem::in1 + Problem::in2 + 1, k_grad_x = Problem::out, k_grad_w = Problem::B * Problem::n;
  EXPECT_LE(max_abs_diff(got.out, want.out), bound(k_out)) << what;
  EXPECT_LE(max_abs_diff(got.gx1, want.gx1), bound(k_grad_x)) << what;
  EXPECT_LE(max_abs_diff(got.gx2, want.gx2), bound(k_grad_x)) << what;
  EXPECT_LE(max_abs_diff(got.gw, want.gw), bound(k_grad_w)) << what;
  EXPECT_LE(max_abs_diff(got.gb, want.gb), bound(k_grad_w)) << what;
}

TEST(LinearSum, EqualsTheLayerOverTheConcatenationForwardAndBackward) {
  const Problem p(DType::F64);
  const Outcome fused = run(p, true), composed = run(p, false);
  expect_close(fused, composed, std::ldexp(1.0, -53), "float64");
  EXPECT_GT(max_abs(fused.gw), 1.0);  // the gradients are not all zero
  EXPECT_GT(max_abs(fused.gx2), 0.1);
}

// The float64 reference runs on the float32 operands, so only the float32
// roundings of the products are measured.
TEST(LinearSum, Float32MatchesFloat64) {
  Problem p32(DType::F32), p64(DType::F64);
  const std::vector<std::pair<const Tensor*, Tensor*>> operands = {
      {&p32.x1, &p64.x1}, {&p32.x2, &p64.x2}, {&p32.w, &p64.w}, {&p32.b, &p64.b}, {&p32.g, &p64.g}};
  for (const auto& [from, to] : operands) *to = cast(*from, DType::F64);
  const Outcome f32 = run(p32, true), f64 = run(p64, true);
  EXPECT_EQ(f32.out.dtype(), DType::F32);
  expect_close(f32, f64, std::ldexp(1.0, -24), "float32 against float64");
}

TEST(LinearSum, OneTermIsLinearAndThreeTermsAddUp) {
  Generator gen(3);
  const Tensor x = rand_uniform({5, 7}, -1, 1, gen, DType::F64), w = rand_uniform({3, 7}, -1, 1, gen, DType::F64);
  const Tensor bias = rand_uniform({3}, -1, 1, gen, DType::F64);
  EXPECT_LE(max_abs_diff(linear_sum({x}, {w}, bias), linear(x, w, bias)), 0.0);  // the same path: identical
  const Tensor y = rand_uniform({5, 2}, -1, 1, gen, DType::F64), v = rand_uniform({3, 2}, -1, 1, gen, DType::F64);
  const Tensor three = linear_sum({x, y, x}, {w, v, w});
  const Tensor parts = linear(x, w) + linear(y, v) + linear(x, w);
  EXPECT_LE(max_abs_diff(three, parts), 2 * 16.0 * 16.0 * std::ldexp(1.0, -53));  // k = 7 + 2 + 7 products
}

TEST(LinearSum, BadTermsNameTheProblem) {
  const Tensor x = zeros({2, 3, 4}), y = zeros({2, 3, 5}), w = zeros({6, 4}), v = zeros({6, 5});
  EXPECT_THAT(
      error_of([&] {
        linear_sum({x, y}, {w});
      }),
      HasSubstr("linear_sum: needs one weight per input and at least one input, got 2 input(s) and 1 weight(s)"));
  EXPECT_THAT(error_of([&] { linear_sum({}, {}); }), HasSubstr("at least one input"));
  EXPECT_THAT(error_of([&] {
                linear_sum({x, zeros({2, 4, 5})}, {w, v});
              }),
              HasSubstr("input 1 [2, 4, 5] does not share the leading axes of input 0 [2, 3, 4]"));
  EXPECT_THAT(error_of([&] {
                linear_sum({x, y}, {w, zeros({7, 5})});
              }),
              HasSubstr("weight 1 [7, 5] has 7 outputs, weight 0 [6, 4] has 6"));
  EXPECT_THAT(error_of([&] {
                linear_sum({x, y}, {w, w});
              }),
              HasSubstr("input [2, 3, 5] does not end in the weight's input size: weight [6, 4]"));
  EXPECT_THAT(error_of([&] {
                linear_sum({x, zeros({2, 3, 5}, DType::F64)}, {w, zeros({6, 5}, DType::F64)});
              }),
              HasSubstr("linear_sum: dtype mismatch"));
}

}  // namespace
}  // namespace attn
