// Forward values of the unary, binary, comparison and selection ops in both
// float dtypes, including the extremes the stable formulas exist for.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <utility>

#include "attn/engine/copy.h"
#include "attn/engine/error.h"
#include "attn/engine/random.h"
#include "attn/ops/binary/binary.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/ops/relu_gradient_columns/relu_gradient_columns.h"
#include "attn/ops/sigmoid_gate/sigmoid_gate.h"
#include "attn/ops/unary/unary.h"
#include "attn/ops/view/view.h"
#include "test_util.h"

namespace attn {
namespace {

class BothDtypes : public ::testing::TestWithParam<DType> {};

TEST_P(BothDtypes, UnaryOpsMatchTheMathLibrary) {
  DType dt = GetParam();
  double tol = dt == DType::F32 ? 1e-6 : 1e-14;
  std::vector<double> xs = {-2.5, -0.3, 0.4, 1.7};
  Tensor x = from_vector(xs, {4}, dt);
  struct Case {
    Tensor y;
    std::function<double(double)> f;
  };
  std::vector<Case> cases = {
      {neg(x), [](double v) { return -v; }},
      {exp(x), [](double v) { return std::exp(v); }},
      {abs(x), [](double v) { return std::abs(v); }},
      {tanh(x), [](double v) { return std::tanh(v); }},
      {sigmoid(x), [](double v) { return 1 / (1 + std::exp(-v)); }},
      {log_sigmoid(x), [](double v) { return std::log(1 / (1 + std::exp(-v))); }},
      {relu(x), [](double v) { return v > 0 ? v : 0; }},
      {elu(x, 0.5), [](double v) { return v > 0 ? v : 0.5 * (std::exp(v) - 1); }},
      {softplus(x), [](double v) { return std::log1p(std::exp(v)); }},
      {add_scalar(x, 2), [](double v) { return v + 2; }},
      {mul_scalar(x, 3), [](double v) { return v * 3; }},
      {clamp(x, -1, 1), [](double v) { return std::min(1.0, std::max(-1.0, v)); }},
  };
  for (size_t c = 0; c < cases.size(); ++c)
    for (size_t i = 0; i < xs.size(); ++i)
      EXPECT_NEAR(cases[c].y.at({static_cast<int64_t>(i)}), cases[c].f(xs[i]), tol * (1 + std::abs(cases[c].f(xs[i]))))
          << "case " << c << " x=" << xs[i];
  Tensor pos = from_vector({0.25, 4.0}, {2}, dt);
  EXPECT_NEAR(log(pos).at({1}), std::log(4.0), tol);
  EXPECT_NEAR(sqrt(pos).at({0}), 0.5, tol);
  EXPECT_NEAR(pow_scalar(pos, 1.5).at({1}), 8.0, tol * 8);
}

TEST_P(BothDtypes, ActivationsPassNaNThrough) {
  // A NaN must reach the output (and the anomaly detector), never become 0.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor x = from_vector({nan, -1.0, 2.0}, {3}, GetParam());
  for (Tensor y : {relu(x), elu(x), tanh(x), sigmoid(x), softplus(x), log_sigmoid(x)}) {
    EXPECT_TRUE(std::isnan(y.to_vector()[0]));
    EXPECT_FALSE(std::isnan(y.to_vector()[1]));
  }
  EXPECT_EQ(relu(x).to_vector()[1], 0.0);
  EXPECT_EQ(relu(x).to_vector()[2], 2.0);
}

// A gate (relu, clamp) selects its gradient: where the input is cut off the
// gradient is exactly 0 even when the incoming one is NaN or Inf (0 * NaN
// would be NaN); where it passes, the incoming value comes through as is.
TEST_P(BothDtypes, GatesSelectTheirGradientInsteadOfMultiplying) {
  const DType dt = GetParam();
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  const Tensor upstream = from_vector({nan, inf, nan, 3.0}, {4}, dt);
  const std::vector<std::pair<std::function<Tensor(const Tensor&)>, std::vector<double>>> gates = {
      {[](const Tensor& t) { return relu(t); }, {-1.0, -2.0, 0.5, 2.0}},
      {[](const Tensor& t) { return clamp(t, -1, 1); }, {-3.0, 5.0, 0.5, 0.25}},
  };
  for (const auto& [gate, inputs] : gates) {
    Tensor x = from_vector(inputs, {4}, dt).set_requires_grad(true);
    sum(mul(gate(x), upstream)).backward();
    const std::vector<double> g = x.grad().to_vector();
    EXPECT_EQ(g[0], 0.0);  // cut off, NaN incoming
    EXPECT_EQ(g[1], 0.0);  // cut off, Inf incoming
    EXPECT_TRUE(std::isnan(g[2]));  // passes: the NaN is not hidden
    EXPECT_EQ(g[3], 3.0);
  }
}

// linear_relu's fused backward pass: the selected gradient as relu's own
// backward gives it (bit for bit: a select), and column sums within the
// rounding of the selected values' sums, with NaN at cut-off entries never
// reaching either. Columns span several threads' blocks.
TEST_P(BothDtypes, ReluGradientColumnsIsTheSelectAndItsColumnSums) {
  const DType dt = GetParam();
  const int64_t rows = 300, cols = 70;
  Generator gen(21);
  Tensor grad = rand_uniform({rows, cols}, -1.0, 1.0, gen, dt);
  Tensor output = rand_uniform({rows, cols}, -1.0, 1.0, gen, dt);
  write_element(output, 5, -0.5);
  write_element(grad, 5, std::numeric_limits<double>::quiet_NaN());  // cut off: must not reach the sums
  const ReluGradientColumns r = relu_gradient_columns(grad, output);
  const std::vector<double> want = relu_gradient(grad, output).to_vector(), got = r.grad_in.to_vector();
  ASSERT_EQ(got.size(), want.size());
  for (size_t e = 0; e < got.size(); ++e) ASSERT_EQ(got[e], want[e]) << "entry " << e;
  const std::vector<double> sums = r.column_sums.to_vector();
  const double u = dt == DType::F32 ? std::numeric_limits<float>::epsilon() / 2 : std::numeric_limits<double>::epsilon() / 2;
  for (int64_t c = 0; c < cols; ++c) {
    double exact = 0, magnitude = 0;
    for (int64_t i = 0; i < rows; ++i) {
      exact += want[i * cols + c];
      magnitude += std::abs(want[i * cols + c]);
    }
    // Double accumulation, one rounding to the dtype at the end.
    ASSERT_NEAR(sums[c], exact, u * std::abs(exact) + rows * std::numeric_limits<double>::epsilon() * magnitude)
        << "column " << c;
  }
  EXPECT_THROW(relu_gradient_columns(grad, transpose(output, 0, 1)), Error);
}

TEST_P(BothDtypes, StableFormulasStayFiniteAtExtremes) {
  Tensor x = from_vector({-1000, 1000}, {2}, GetParam());
  Tensor s = sigmoid(x), ls = log_sigmoid(x), sp = softplus(x);
  EXPECT_EQ(s.at({0}), 0.0);
  EXPECT_EQ(s.at({1}), 1.0);
  EXPECT_EQ(ls.at({0}), -1000.0);
  EXPECT_EQ(ls.at({1}), 0.0);
  EXPECT_EQ(sp.at({0}), 0.0);
  EXPECT_EQ(sp.at({1}), 1000.0);
}

TEST_P(BothDtypes, BinaryOpsBroadcastAndCompare) {
  DType dt = GetParam();
  Tensor a = from_vector({1, 5, 3, 2}, {2, 2}, dt);
  Tensor b = from_vector({2, 4}, {2}, dt);
  EXPECT_EQ(sub(a, b).to_vector(), (std::vector<double>{-1, 1, 1, -2}));
  EXPECT_EQ(div(a, b).to_vector(), (std::vector<double>{0.5, 1.25, 1.5, 0.5}));
  EXPECT_EQ(maximum(a, b).to_vector(), (std::vector<double>{2, 5, 3, 4}));
  EXPECT_EQ(minimum(a, b).to_vector(), (std::vector<double>{1, 4, 2, 2}));
  EXPECT_EQ(gt(a, b).to_vector(), (std::vector<double>{0, 1, 1, 0}));
  EXPECT_EQ(le(a, b).to_vector(), (std::vector<double>{1, 0, 0, 1}));
  EXPECT_EQ(eq(a, a).to_vector(), (std::vector<double>{1, 1, 1, 1}));
  EXPECT_EQ(ne(a, b).to_vector(), (std::vector<double>{1, 1, 1, 1}));
  EXPECT_EQ(lt(a, b).dtype(), DType::U8);
  EXPECT_FALSE(ge(a.detach().set_requires_grad(true), b).requires_grad());
}

// The graph keeps an operand only where the gradient reads it: an add or a
// subtract lets both operands go (their memory returns before the backward
// pass), a product keeps both, a quotient its divisor; gradients stay right.
TEST(BinaryGraph, KeepsOperandsOnlyWhereTheGradientReadsThem) {
  Tensor x = full({64}, 1.5, DType::F64).set_requires_grad(true);
  Tensor y = full({64}, -0.5, DType::F64).set_requires_grad(true);
  auto kept = [&](Tensor (*op)(const Tensor&, const Tensor&)) {
    Tensor a = neg(x), b = neg(y);  // intermediates: only the graph can hold them
    std::weak_ptr<Storage> wa = a.storage(), wb = b.storage();
    Tensor out = op(a, b);
    a = Tensor();
    b = Tensor();
    const std::pair<bool, bool> alive{!wa.expired(), !wb.expired()};
    sum(out).backward();
    return alive;
  };
  EXPECT_EQ(kept(add), std::make_pair(false, false));
  EXPECT_EQ(kept(sub), std::make_pair(false, false));
  EXPECT_EQ(kept(mul), std::make_pair(true, true));
  EXPECT_EQ(kept(div), std::make_pair(false, true));
  // d/dx of the four sums: -1 + -1 + y + 1/y, d/dy: -1 + 1 + x - x/y^2.
  for (double g : x.grad().to_vector()) EXPECT_NEAR(g, -2.0 - 0.5 - 2.0, 1e-12);
  for (double g : y.grad().to_vector()) EXPECT_NEAR(g, 0.0 + 1.5 - 1.5 / 0.25, 1e-12);
}

// A mask with nothing set selects nothing: masked_fill hands back its input
// (no copy, no select in the backward pass) and the gradient reaches it
// unchanged; one set element and it fills as usual, NaN left where unmasked.
TEST(MaskedFill, NothingMaskedReturnsTheInputAndItsGradient) {
  Tensor x = from_vector({1.0, std::nan(""), -2.0, 4.0}, {2, 2}, DType::F64).set_requires_grad(true);
  Tensor none = zeros({2, 1}, DType::U8);
  Tensor out = masked_fill(x, none, 7.0);
  EXPECT_EQ(out.storage(), x.storage());
  sum(mul_scalar(masked_fill(x, none, 7.0), 3.0)).backward();
  for (double g : x.grad().to_vector()) EXPECT_EQ(g, 3.0);

  Tensor row = from_vector({0, 1}, {2, 1}, DType::U8);
  Tensor filled = masked_fill(x.detach(), row, 7.0);
  EXPECT_NE(filled.storage(), x.storage());
  const std::vector<double> v = filled.to_vector();
  EXPECT_EQ(v[0], 1.0);
  EXPECT_TRUE(std::isnan(v[1]));
  EXPECT_EQ(v[2], 7.0);
  EXPECT_EQ(v[3], 7.0);
}

TEST_P(BothDtypes, WhereAndMaskedFillSelectByMask) {
  DType dt = GetParam();
  Tensor mask = from_vector({1, 0, 0, 1}, {2, 2}, DType::U8);
  Tensor a = from_vector({1, 2, 3, 4}, {2, 2}, dt);
  Tensor b = from_vector({-1, -2}, {2}, dt);
  EXPECT_EQ(where(mask, a, b).to_vector(), (std::vector<double>{1, -2, -1, 4}));
  EXPECT_EQ(masked_fill(a, mask, 9).to_vector(), (std::vector<double>{9, 2, 3, 9}));
  Tensor col = from_vector({1, 0}, {2, 1}, DType::U8);
  EXPECT_EQ(masked_fill(a, col, 0).to_vector(), (std::vector<double>{0, 0, 3, 4}));
}

// Each inner-run layout of where and binary (ops/binary/binary_cpu.cpp): a condition
// constant over the run choosing a contiguous, a scalar or a strided operand;
// per-element conditions with contiguous or scalar operands; a scalar first
// operand of a binary op. Every element is compared with its definition.
TEST_P(BothDtypes, WhereAndBinaryRunLayoutsMatchTheElementwiseDefinition) {
  DType dt = GetParam();
  const int64_t rows = 6, cols = 37;
  Tensor x = empty({rows, cols}, dt), yt = empty({cols, rows}, dt), cond = empty({rows, cols}, DType::U8);
  for (int64_t i = 0; i < x.numel(); ++i) {
    write_element(x, i, static_cast<double>(i % 11) - 5);
    write_element(yt, i, static_cast<double>(i % 7) + 0.5);
    write_element(cond, i, (i * 7) % 3 == 0 ? 1 : 0);
  }
  Tensor y = transpose(yt, 0, 1);  // [rows, cols], column stride != 1
  Tensor row_cond = from_vector({1, 0, 1, 1, 0, 0}, {rows, 1}, DType::U8);
  Tensor scalar = from_vector({-9.0}, {}, dt);
  auto check = [&](const Tensor& got, const std::function<double(int64_t, int64_t)>& want, const char* what) {
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) ASSERT_EQ(got.at({r, c}), want(r, c)) << what << " at " << r << ", " << c;
  };
  auto rc = [&](int64_t r) { return row_cond.at({r, 0}) != 0; };
  auto ec = [&](int64_t r, int64_t c) { return cond.at({r, c}) != 0; };
  check(
      where(row_cond, x, y),
      [&](int64_t r, int64_t c) {
        return rc(r) ? x.at({r, c}) : y.at({r, c});
      },
      "row, x|y");
  check(
      where(row_cond, y, scalar),
      [&](int64_t r, int64_t c) {
        return rc(r) ? y.at({r, c}) : -9.0;
      },
      "row, y|s");
  check(
      where(row_cond, scalar, x),
      [&](int64_t r, int64_t c) {
        return rc(r) ? -9.0 : x.at({r, c});
      },
      "row, s|x");
  Tensor xc = contiguous(y);
  check(
      where(cond, x, xc),
      [&](int64_t r, int64_t c) {
        return ec(r, c) ? x.at({r, c}) : xc.at({r, c});
      },
      "x|x");
  check(
      where(cond, x, scalar),
      [&](int64_t r, int64_t c) {
        return ec(r, c) ? x.at({r, c}) : -9.0;
      },
      "x|s");
  check(
      where(cond, scalar, x),
      [&](int64_t r, int64_t c) {
        return ec(r, c) ? -9.0 : x.at({r, c});
      },
      "s|x");
  check(
      where(cond, x, y),
      [&](int64_t r, int64_t c) {
        return ec(r, c) ? x.at({r, c}) : y.at({r, c});
      },
      "x|y");
  check(
      sub(scalar, x),
      [&](int64_t r, int64_t c) {
        return -9.0 - x.at({r, c});
      },
      "s - x");
  check(
      sub(x, scalar),
      [&](int64_t r, int64_t c) {
        return x.at({r, c}) + 9.0;
      },
      "x - s");
  // Comparisons: unit-stride, scalar and general runs.
  Tensor zero = from_vector({0.0}, {}, dt);
  check(
      lt(x, xc),
      [&](int64_t r, int64_t c) {
        return x.at({r, c}) < xc.at({r, c}) ? 1.0 : 0.0;
      },
      "x < x");
  check(
      gt(x, zero),
      [&](int64_t r, int64_t c) {
        return x.at({r, c}) > 0 ? 1.0 : 0.0;
      },
      "x > 0");
  check(
      eq(x, y),
      [&](int64_t r, int64_t c) {
        return x.at({r, c}) == y.at({r, c}) ? 1.0 : 0.0;
      },
      "x == y");
}

// The fused gate against its definition, evaluated in double: across
// saturation (|z| up to 100 and +-inf: g exactly 0 or 1, never NaN), with a
// run long enough for the vectorised path and a broadcast gate for the
// strided one. Tolerance: float64 a few ulp; float32 the rounding of g, two
// products and a sum of |values| <= 1: 4 * 2^-24 each, 1e-6 together.
TEST_P(BothDtypes, SigmoidGateIsTheGatedMixAcrossSaturation) {
  const DType dt = GetParam();
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> special = {-inf, -100, -20, -1, 0, 1, 20, 100, inf};
  const int64_t n = 1000;
  Generator gen(61);
  Tensor z = rand_uniform({n}, -6, 6, gen, dt), a = rand_uniform({n}, -1, 1, gen, dt),
         b = rand_uniform({n}, -1, 1, gen, dt);
  for (size_t i = 0; i < special.size(); ++i) write_element(z, static_cast<int64_t>(i), special[i]);
  const double tol = dt == DType::F64 ? 1e-15 : 1e-6;
  auto expect_mix = [&](const Tensor& got, const std::vector<double>& zv, const std::vector<double>& av,
                        const std::vector<double>& bv, const char* what) {
    const std::vector<double> out = got.to_vector();
    ASSERT_EQ(out.size(), av.size());
    for (size_t i = 0; i < out.size(); ++i) {
      const double g = 1.0 / (1.0 + std::exp(-zv[i % zv.size()]));
      ASSERT_NEAR(out[i], g * av[i] + (1 - g) * bv[i], tol) << what << " element " << i << ", z " << zv[i % zv.size()];
    }
  };
  expect_mix(sigmoid_gate(z, a, b), z.to_vector(), a.to_vector(), b.to_vector(), "contiguous");
  // A gate [5] broadcast over [200, 5] rows: the strided path.
  Tensor zr = narrow(z, 0, 0, 5);
  Tensor ar = reshape(a, {200, 5}), br = reshape(b, {200, 5});
  expect_mix(sigmoid_gate(zr, ar, br), zr.to_vector(), ar.to_vector(), br.to_vector(), "broadcast gate");
  // a permuted (a split-heads view): the output is stored like a, so that
  // merging it back is a view; the values are the same mix.
  Tensor ap = transpose(reshape(a, {20, 2, 25}), 0, 1), bp = contiguous(transpose(reshape(b, {20, 2, 25}), 0, 1));
  Tensor zp = contiguous(transpose(reshape(z, {20, 2, 25}), 0, 1));
  const Tensor mixed = sigmoid_gate(zp, ap, bp);
  EXPECT_EQ(mixed.strides(), ap.strides());
  expect_mix(mixed, zp.to_vector(), ap.to_vector(), bp.to_vector(), "a permuted");
}

TEST(SigmoidGate, BadOperandsAreClearErrors) {
  using testing_support::error_of;
  const Tensor z = zeros({2, 3}), a = zeros({2, 3});
  std::string m = error_of([&] { sigmoid_gate(z, a, zeros({4})); });
  EXPECT_NE(m.find("sigmoid_gate"), std::string::npos) << m;
  EXPECT_NE(m.find("[4]"), std::string::npos) << m;
  m = error_of([&] { sigmoid_gate(z, a, zeros({2, 3}, DType::F64)); });
  EXPECT_NE(m.find("float64"), std::string::npos) << m;
  m = error_of([&] { sigmoid_gate(Tensor(), a, a); });
  EXPECT_NE(m.find("sigmoid_gate"), std::string::npos) << m;
}

TEST_P(BothDtypes, LargeStridedInputsTakeTheParallelPathCorrectly) {
  DType dt = GetParam();
  const int64_t n = 300, m = 500;  // 150k elements: above the parallel grain
  Tensor base = empty({m, n}, dt);
  for (int64_t i = 0; i < base.numel(); ++i) write_element(base, i, static_cast<double>(i % 97) - 48);
  Tensor t = transpose(base, 0, 1);  // [n, m], non-contiguous
  Tensor y = add(relu(t), from_vector({1.0}, {1}, dt));
  for (int64_t r : {0L, 17L, 299L})
    for (int64_t c : {0L, 250L, 499L}) {
      double v = base.at({c, r});
      ASSERT_EQ(y.at({r, c}), (v > 0 ? v : 0) + 1);
    }
}

// Runs longer than two parallel grains are cut into pieces that threads
// share (engine/cpu_loops.h); every element is checked, so a piece boundary
// that drops, repeats or shifts an element fails. Lengths are odd so the last
// piece is shorter than the others.
TEST_P(BothDtypes, LongRunsCutIntoPiecesCoverEveryElementOnce) {
  DType dt = GetParam();
  const int64_t n = 200003;
  Tensor x = empty({n}, dt);
  for (int64_t i = 0; i < n; ++i) write_element(x, i, static_cast<double>(i % 1013) - 500);
  std::vector<double> xs = x.to_vector();

  std::vector<double> y = relu(x).to_vector();  // one contiguous run
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(y[i], xs[i] > 0 ? xs[i] : 0) << "element " << i;

  Tensor every_other = slice(x, 0, 1, n, 2);  // a long run with step 2
  const int64_t half = every_other.numel();
  std::vector<double> z = mul_scalar(every_other, 2).to_vector();
  for (int64_t i = 0; i < half; ++i) ASSERT_EQ(z[i], 2 * xs[1 + 2 * i]) << "element " << i;

  Tensor rows = reshape(slice(x, 0, 0, 2 * 100001), {2, 100001});  // two long rows
  Tensor col = from_vector({10.0, 20.0}, {2, 1}, dt);              // broadcast along the run
  std::vector<double> w = add(rows, col).to_vector();
  for (int64_t r = 0; r < 2; ++r)
    for (int64_t c = 0; c < 100001; ++c)
      ASSERT_EQ(w[r * 100001 + c], xs[r * 100001 + c] + (r == 0 ? 10 : 20)) << "row " << r << " column " << c;
}

TEST_P(BothDtypes, AxpyUpdatesInPlace) {
  Tensor p = from_vector({1, 2, 3}, {3}, GetParam());
  axpy_(p, -0.5, from_vector({2, 2, 2}, {3}, GetParam()));
  EXPECT_EQ(p.to_vector(), (std::vector<double>{0, 1, 2}));
}

INSTANTIATE_TEST_SUITE_P(Dtypes, BothDtypes, ::testing::Values(DType::F32, DType::F64),
                         [](const ::testing::TestParamInfo<DType>& i) { return std::string(dtype_name(i.param)); });

TEST(Cast, ConvertsBetweenFloatDtypesAndBackpropagates) {
  Tensor x = from_vector({1.5, -2.25}, {2}, DType::F64).set_requires_grad(true);
  Tensor y = cast(x, DType::F32);
  EXPECT_EQ(y.dtype(), DType::F32);
  EXPECT_EQ(y.to_vector(), (std::vector<double>{1.5, -2.25}));
  cast(y, DType::F64).backward(from_vector({1, 2}, {2}, DType::F64));
  EXPECT_EQ(x.grad().dtype(), DType::F64);
  EXPECT_EQ(x.grad().to_vector(), (std::vector<double>{1, 2}));
}

TEST(Clamp, RejectsInvertedBounds) { EXPECT_THROW(clamp(zeros({2}), 1, -1), Error); }

}  // namespace
}  // namespace attn
