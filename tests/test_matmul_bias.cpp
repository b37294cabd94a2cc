// matmul_bias (ops/matmul/matmul_fused.h): a product plus a bias per output column (per
// batch entry where it varies: MTSA's per-head bias), relu'd on request, the
// bias and relu taken in the engine's float32 GEMM as it stores its sums.
// Checked against the composed ops (matmul, +, relu) forward and backward at
// a size the CPU GEMMs thread; float32, by either float32 GEMM, against
// float64; matmul_sum's bias; and the errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "attn/engine/copy.h"
#include "attn/engine/random.h"
#include "attn/ops/binary/binary.h"
#include "attn/ops/matmul/matmul.h"
#include "attn/ops/matmul/matmul_fused.h"
#include "attn/ops/cpu/sgemm_avx512.h"
#include "attn/ops/unary/unary.h"
#include "attn/ops/view/view.h"
#include "test_util.h"

namespace attn {
namespace {

using ::testing::HasSubstr;
using namespace testing_support;

// x [B, h, n, d] @ w [h, d, out] + bias [h, 1, out], MTSA's per-head layer.
struct Problem {
  static constexpr int64_t B = 4, h = 2, n = 48, d = 40, out = 36;
  Tensor x, w, bias, g;
  explicit Problem(DType dt) {
    Generator gen(23);
    x = rand_uniform({B, h, n, d}, -1, 1, gen, dt);
    w = rand_uniform({h, d, out}, -1, 1, gen, dt);
    bias = rand_uniform({h, 1, out}, -1, 1, gen, dt);
    g = rand_uniform({B, h, n, out}, -1, 1, gen, dt);
  }
  Problem as(DType dt) const {  // the same values in another dtype
    Problem p = *this;
    p.x = cast(x, dt);
    p.w = cast(w, dt);
    p.bias = cast(bias, dt);
    p.g = cast(g, dt);
    return p;
  }
};

struct Outcome {
  Tensor out, gx, gw, gbias;
};

Tensor leaf(const Tensor& t) { return t.detach().set_requires_grad(true); }

// By matmul_bias, or by the ops it fuses.
Outcome run(const Problem& p, bool fused, bool with_relu) {
  Tensor x = leaf(p.x), w = leaf(p.w), bias = leaf(p.bias);
  Tensor out = fused ? matmul_bias(x, w, bias, with_relu) : matmul(x, w) + bias;
  if (!fused && with_relu) out = relu(out);
  out.backward(p.g);
  return {out, x.grad(), w.grad(), bias.grad()};
}

// Each entry is a sum of k products of values in [-1, 1) (plus a bias term
// for the output): k = d + 1 for the output, out for x's gradient, B n for
// w's and bias's. Either order of summation is within k u of the exact sum
// times its k terms of size <= 1, so two orders differ by at most 2 k^2 u.
void expect_close(const Outcome& got, const Outcome& want, double unit_roundoff, const char* what) {
  auto bound = [unit_roundoff](double k) { return 2 * k * k * unit_roundoff; };
  EXPECT_LE(max_abs_diff(got.out, want.out), bound(Problem::d + 1)) << what;
  EXPECT_LE(max_abs_diff(got.gx, want.gx), bound(Problem::out)) << what;
  EXPECT_LE(max_abs_diff(got.gw, want.gw), bound(Problem::B * Problem::n)) << what;
  EXPECT_LE(max_abs_diff(got.gbias, want.gbias), bound(Problem::B * Problem::n)) << what;
}

TEST(MatmulBias, EqualsTheComposedOpsForwardAndBackward) {
  const Problem p(DType::F64);
  for (bool with_relu : {false, true}) {
    const Outcome fused = run(p, true, with_relu), composed = run(p, false, with_relu);
    expect_close(fused, composed, std::ldexp(1.0, -53), with_relu ? "relu" : "no relu");
    EXPECT_GT(max_abs(fused.gw), 1.0);  // the gradients are not all zero
    EXPECT_GT(max_abs(fused.gbias), 1.0);
    EXPECT_GT(max_abs(fused.gx), 0.1);
  }
}

// The relu cuts off about half the outputs: its output has zeros, never a
// negative, and the bias's gradient differs from the unrelu'd one.
TEST(MatmulBias, ReluCutsOffAndSelectsTheGradient) {
  const Problem p(DType::F64);
  const Outcome cut = run(p, true, true), plain = run(p, true, false);
  const std::vector<double> values = cut.out.to_vector();
  int64_t zeros = 0;
  for (double v : values) {
    ASSERT_GE(v, 0.0);
    zeros += v == 0.0;
  }
  EXPECT_GT(zeros, static_cast<int64_t>(values.size()) / 4);
  EXPECT_LT(zeros, static_cast<int64_t>(values.size()) * 3 / 4);
  EXPECT_GT(max_abs_diff(cut.gbias, plain.gbias), 1.0);
}

class BothSgemms : public ::testing::TestWithParam<CpuSgemm> {
 protected:
  void SetUp() override { set_cpu_sgemm(GetParam()); }
  void TearDown() override { set_cpu_sgemm(CpuSgemm::automatic); }
};

// The float64 reference runs on the float32 values, so only the float32
// roundings are measured. Without the relu every entry compares; with it an
// output within rounding of 0 may be cut on one side and not the other, so
// the relu'd forward compares (relu moves no value further apart) and its
// gradients are those of the cases above.
TEST_P(BothSgemms, Float32MatchesFloat64) {
  const Problem p32(DType::F32);
  const Problem p64 = p32.as(DType::F64);
  const Outcome f32 = run(p32, true, false), f64 = run(p64, true, false);
  EXPECT_EQ(f32.out.dtype(), DType::F32);
  expect_close(f32, f64, std::ldexp(1.0, -24), "float32 against float64");
  const Tensor relu32 = matmul_bias(p32.x, p32.w, p32.bias, true), relu64 = matmul_bias(p64.x, p64.w, p64.bias, true);
  EXPECT_LE(max_abs_diff(relu32, relu64), 2 * (Problem::d + 1) * (Problem::d + 1) * std::ldexp(1.0, -24));
  EXPECT_GT(max_abs(relu32), 1.0);
}

INSTANTIATE_TEST_SUITE_P(MatmulBias, BothSgemms, ::testing::Values(CpuSgemm::automatic, CpuSgemm::openblas),
                         [](const ::testing::TestParamInfo<CpuSgemm>& info) {
                           return info.param == CpuSgemm::automatic ? "EnginesOwn" : "OpenBlas";
                         });

// A bias of the columns only ([out]) is every batch entry's.
TEST(MatmulBias, ColumnBiasIsEveryEntrysBias) {
  const Problem p(DType::F64);
  const Tensor columns = reshape(narrow(p.bias, 0, 1, 1), {Problem::out});
  const Tensor got = matmul_bias(p.x, p.w, columns), want = matmul(p.x, p.w) + columns;
  EXPECT_LE(max_abs_diff(got, want), 2 * (Problem::d + 1) * (Problem::d + 1) * std::ldexp(1.0, -53));
}

// matmul_sum's bias: the first term writes onto it.
TEST(MatmulBias, MatmulSumTakesTheBias) {
  const Problem p(DType::F64);
  const Tensor x1 = narrow(p.x, 3, 0, 25), x2 = narrow(p.x, 3, 25, Problem::d - 25);
  const Tensor got = matmul_sum({x1, x2}, {narrow(p.w, 1, 0, 25), narrow(p.w, 1, 25, Problem::d - 25)}, p.bias);
  EXPECT_LE(max_abs_diff(got, matmul(p.x, p.w) + p.bias), 2 * (Problem::d + 1) * (Problem::d + 1) * std::ldexp(1.0, -53));
}

TEST(MatmulBias, BadBiasNamesTheProblem) {
  const Tensor a = zeros({2, 3, 4, 5}), b = zeros({3, 5, 6});
  EXPECT_THAT(error_of([&] { matmul_bias(a, b, Tensor()); }), HasSubstr("matmul_bias: got an undefined bias"));
  EXPECT_THAT(error_of([&] { matmul_bias(a, b, zeros({3, 4, 6})); }),
              HasSubstr("matmul_bias: bias [3, 4, 6] is not one row per batch entry of the product [2, 3, 4, 6]"));
  EXPECT_THAT(error_of([&] { matmul_bias(a, b, zeros({3, 1, 5}), true); }),
              HasSubstr("matmul_bias_relu: bias [3, 1, 5] is not one row"));
  EXPECT_THAT(error_of([&] { matmul_bias(a, b, zeros({4, 1, 6})); }), HasSubstr("is not one row per batch entry"));
  EXPECT_THAT(error_of([&] { matmul_bias(a, b, zeros({6}, DType::F64)); }),
              HasSubstr("matmul_bias: bias is float64 on cpu, the operands are float32 on cpu"));
  EXPECT_THAT(error_of([&] { matmul_sum({a}, {b}, zeros({2, 1, 1, 1, 6})); }),
              HasSubstr("matmul_sum: bias [2, 1, 1, 1, 6] is not one row"));
}

}  // namespace
}  // namespace attn
