// matmul_sum (ops/matmul/matmul_fused.h): products of one result shape accumulating into
// one output. Checked against matmul over the concatenation it replaces in
// MTSA's gate ([v | h] @ W per head), forward and backward, at a size the
// CPU GEMMs thread; float32 against float64; and its errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "attn/engine/copy.h"
#include "attn/engine/random.h"
#include "attn/ops/join/join.h"
#include "attn/ops/matmul/matmul.h"
#include "attn/ops/matmul/matmul_fused.h"
#include "attn/ops/view/view.h"
#include "test_util.h"

namespace attn {
namespace {

using ::testing::HasSubstr;
using namespace testing_support;

// v [B, h, n, 40] and s [B, h, n, 24] against one per-head weight
// [h, 64, out] whose row views are the two terms' right operands.
struct Problem {
  static constexpr int64_t B = 4, h = 2, n = 48, d1 = 40, d2 = 24, out = 48;
  Tensor v, s, w, g;
  explicit Problem(DType dt) {
    Generator gen(19);
    v = rand_uniform({B, h, n, d1}, -1, 1, gen, dt);
    s = rand_uniform({B, h, n, d2}, -1, 1, gen, dt);
    w = rand_uniform({h, d1 + d2, out}, -1, 1, gen, dt);
    g = rand_uniform({B, h, n, out}, -1, 1, gen, dt);
  }
};

struct Outcome {
  Tensor out, gv, gs, gw;
};

Tensor leaf(const Tensor& t) { return t.detach().set_requires_grad(true); }

// By matmul_sum on row views of w, or by matmul on the concatenation.
Outcome run(const Problem& p, bool fused) {
  Tensor v = leaf(p.v), s = leaf(p.s), w = leaf(p.w);
  Tensor out = fused ? matmul_sum({v, s}, {narrow(w, 1, 0, Problem::d1), narrow(w, 1, Problem::d1, Problem::d2)})
                     : matmul(concat({v, s}, -1), w);
  out.backward(p.g);
  return {out, v.grad(), s.grad(), w.grad()};
}

// Each entry is a sum of k products of operands in [-1, 1): k = d1 + d2 for
// the output, out for v's and s's gradients, B n for w's. Either order of
// summation is within k u of the exact sum times its k terms of size <= 1,
// so two orders differ by at most 2 k^2 u.
void expect_close(const Outcome& got, const Outcome& want, double unit_roundoff, const char* what) {
  auto bound = [unit_roundoff](double k) { return 2 * k * k * unit_roundoff; };
  EXPECT_LE(max_abs_diff(got.out, want.out), bound(Problem::d1 + Problem::d2)) << what;
  EXPECT_LE(max_abs_diff(got.gv, want.gv), bound(Problem::out)) << what;
  EXPECT_LE(max_abs_diff(got.gs, want.gs), bound(Problem::out)) << what;
  EXPECT_LE(max_abs_diff(got.gw, want.gw), bound(Problem::B * Problem::n)) << what;
}

TEST(MatmulSum, EqualsTheProductOverTheConcatenationForwardAndBackward) {
  const Problem p(DType::F64);
  const Outcome fused = run(p, true), composed = run(p, false);
  expect_close(fused, composed, std::ldexp(1.0, -53), "float64");
  EXPECT_GT(max_abs(fused.gw), 1.0);  // the gradients are not all zero
  EXPECT_GT(max_abs(fused.gs), 0.1);
}

// The float64 reference runs on the float32 operands, so only the float32
// roundings of the products are measured.
TEST(MatmulSum, Float32MatchesFloat64) {
  Problem p32(DType::F32), p64(DType::F64);
  for (auto [from, to] :
       {std::pair<Tensor*, Tensor*>{&p32.v, &p64.v}, {&p32.s, &p64.s}, {&p32.w, &p64.w}, {&p32.g, &p64.g}})
    *to = cast(*from, DType::F64);
  const Outcome f32 = run(p32, true), f64 = run(p64, true);
  EXPECT_EQ(f32.out.dtype(), DType::F32);
  expect_close(f32, f64, std::ldexp(1.0, -24), "float32 against float64");
}

TEST(MatmulSum, OneTermIsMatmul) {
  Generator gen(3);
  const Tensor a = rand_uniform({2, 5, 7}, -1, 1, gen, DType::F64), b = rand_uniform({7, 3}, -1, 1, gen, DType::F64);
  EXPECT_LE(max_abs_diff(matmul_sum({a}, {b}), matmul(a, b)), 0.0);  // the same path: identical
}

TEST(MatmulSum, BadTermsNameTheProblem) {
  const Tensor a = zeros({2, 3, 4}), b = zeros({4, 5});
  EXPECT_THAT(error_of([&] {
                matmul_sum({a, a}, {b});
              }),
              HasSubstr("matmul_sum: needs as many right operands as left ones, at least one; got 2 and 1"));
  EXPECT_THAT(error_of([&] { matmul_sum({}, {}); }), HasSubstr("at least one"));
  EXPECT_THAT(error_of([&] {
                matmul_sum({a, zeros({2, 4, 4})}, {b, b});
              }),
              HasSubstr("matmul_sum: term 1 [2, 4, 4] @ [4, 5] gives [2, 4, 5], term 0 gives [2, 3, 5]"));
  EXPECT_THAT(error_of([&] {
                matmul_sum({a, zeros({4})}, {b, b});
              }),
              HasSubstr("operands must have at least two axes"));
  EXPECT_THAT(error_of([&] { matmul_sum({a}, {zeros({3, 5})}); }), HasSubstr("matmul_sum: inner dimensions differ"));
  EXPECT_THAT(error_of([&] {
                matmul_sum({a, zeros({2, 3, 4}, DType::F64)}, {b, zeros({4, 5}, DType::F64)});
              }),
              HasSubstr("matmul_sum: dtype mismatch"));
}

}  // namespace
}  // namespace attn
