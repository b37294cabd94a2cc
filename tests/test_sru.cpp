// The SRU sequence op (ops/sru/sru.h) against a per-step loop written from
// the equations in float64 with the engine's autograd (forward and every
// gradient), its exact lengths (padding never read, padded outputs and
// gradients exactly 0), empty and one-token sentences, and float32 at
// extreme inputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "attn/engine/copy.h"
#include "attn/engine/random.h"
#include "attn/models/masks.h"
#include "attn/ops/binary/binary.h"
#include "attn/ops/join/join.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/ops/sru/sru.h"
#include "attn/ops/unary/unary.h"
#include "attn/ops/view/view.h"
#include "attn/util/error.h"

namespace attn {
namespace {

// Row (b, t) of a [B, n, w] tensor as a [w] vector.
Tensor at(const Tensor& t, int64_t b, int64_t pos) { return reshape(narrow(narrow(t, 0, b, 1), 1, pos, 1), {t.size(2)}); }

// The SRU written from its equations, one sentence and one token at a time:
//   f = sigmoid(a^f + b_f), r = sigmoid(a^r + b_r),
//   c_t = f c_{t-1} + (1 - f) x~,  h_t = r tanh(c_t) + (1 - r) x,
// over the sentence's valid tokens (last to first in reverse); padded rows 0.
Tensor reference(const Tensor& u, const Tensor& hw, const Tensor& bias, const std::vector<int64_t>& lens,
                 bool reverse) {
  const int64_t B = u.size(0), n = u.size(1), H = hw.size(2);
  std::vector<Tensor> sentences;
  for (int64_t b = 0; b < B; ++b) {
    std::vector<Tensor> rows(n, zeros({H}, DType::F64));
    Tensor c = zeros({H}, DType::F64);
    for (int64_t s = 0; s < lens[b]; ++s) {
      const int64_t pos = reverse ? lens[b] - 1 - s : s;
      const Tensor ut = at(u, b, pos);
      const Tensor xt = narrow(ut, 0, 0, H);
      const Tensor f = sigmoid(narrow(ut, 0, H, H) + narrow(bias, 0, 0, H));
      const Tensor r = sigmoid(narrow(ut, 0, 2 * H, H) + narrow(bias, 0, H, H));
      c = f * c + (1.0 - f) * xt;
      rows[pos] = r * tanh(c) + (1.0 - r) * at(hw, b, pos);
    }
    sentences.push_back(stack(rows, 0));
  }
  return stack(sentences, 0);
}

struct Grads {
  std::vector<double> y, du, dhw, db;
};

// The loss sum(y * weights) through either implementation, its gradients.
template <class F>
Grads run(const F& f, const Tensor& u0, const Tensor& hw0, const Tensor& b0, const Tensor& weights) {
  const Tensor u = u0.detach().set_requires_grad(true), hw = hw0.detach().set_requires_grad(true),
               b = b0.detach().set_requires_grad(true);
  const Tensor y = f(u, hw, b);
  sum(y * weights).backward();
  return {y.to_vector(), u.grad().to_vector(), hw.grad().to_vector(), b.grad().to_vector()};
}

void expect_near(const std::vector<double>& got, const std::vector<double>& want, double tol, const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << what << " [" << i << "]";
}

// Both implementations evaluate the same formulas in float64 in a different
// order. Each step is ~10 roundings of O(1) values (u in [-2, 2], gates in
// (0, 1), |c| <= max |x~|), and the carried c and its gradient are scaled by
// f < 1 from step to step, so the error stays within ~10 n eps ~ 1e-14 for
// n <= 7; 1e-11 leaves a wide margin and still fails any wrong term (O(0.1)).
constexpr double kTol = 1e-11;

double largest(const std::vector<double>& v) {
  double m = 0;
  for (double e : v) m = std::max(m, std::abs(e));
  return m;
}

TEST(Sru, MatchesPerStepLoopOfTheEquations) {
  struct Case {
    int64_t H;
    std::vector<int64_t> lens;
    int64_t n;
  };
  // H = 70: two unit blocks of the CPU kernel, the second one partial.
  for (const Case& sh : {Case{3, {5, 3, 1, 0}, 5}, Case{70, {7, 2}, 7}})
    for (bool reverse : {false, true}) {
      SCOPED_TRACE(testing::Message() << "H " << sh.H << (reverse ? " reverse" : " forward"));
      const int64_t B = static_cast<int64_t>(sh.lens.size()), n = sh.n, H = sh.H;
      Generator gen(21);
      const Tensor u = rand_uniform({B, n, 3 * H}, -2, 2, gen, DType::F64);
      const Tensor hw = rand_uniform({B, n, H}, -2, 2, gen, DType::F64);
      const Tensor bias = rand_uniform({2 * H}, -1, 1, gen, DType::F64);
      const Tensor weights = rand_uniform({B, n, H}, -1, 1, gen, DType::F64);
      const Tensor mask = length_mask(sh.lens, n);
      const Grads want = run([&](const Tensor& a, const Tensor& x, const Tensor& b) { return reference(a, x, b, sh.lens, reverse); },
                           u, hw, bias, weights);
      const Grads got = run([&](const Tensor& a, const Tensor& x, const Tensor& b) { return sru_sequence(a, x, b, mask, reverse); },
                          u, hw, bias, weights);
      expect_near(got.y, want.y, kTol, "y");
      expect_near(got.du, want.du, kTol, "du");
      expect_near(got.dhw, want.dhw, kTol, "dhighway");
      expect_near(got.db, want.db, kTol, "dbias");
      // The comparison is not vacuous: the gradients carry signal.
      EXPECT_GT(largest(got.db), 1e-3);
    }
}

// A one-token sentence in closed form: c = (1 - f) x~, h = r tanh(c) + (1 - r) x,
// the same in either direction.
TEST(Sru, OneTokenSentenceIsTheClosedForm) {
  const double xt = 0.7, af = -0.3, ar = 1.1, x = -0.4, bf = 0.2, br = -0.5;
  const Tensor u = from_vector({xt, af, ar}, {1, 1, 3}, DType::F64);
  const Tensor hw = from_vector({x}, {1, 1, 1}, DType::F64);
  const Tensor bias = from_vector({bf, br}, {2}, DType::F64);
  const double f = 1 / (1 + std::exp(-(af + bf))), r = 1 / (1 + std::exp(-(ar + br)));
  const double want = r * std::tanh((1 - f) * xt) + (1 - r) * x;
  for (bool reverse : {false, true})
    EXPECT_NEAR(sru_sequence(u, hw, bias, length_mask({1}, 1), reverse).to_vector()[0], want, 1e-15);
}

// NaN and Inf in padded positions of u and the highway change neither the
// outputs (padded ones exactly 0) nor any gradient; padded rows of the input
// gradients are exactly 0.
TEST(Sru, PaddingIsNeverRead) {
  const std::vector<int64_t> lens{4, 2, 0};
  const int64_t B = 3, n = 4, H = 2;
  const Tensor mask = length_mask(lens, n);
  Generator gen(3);
  const Tensor u = rand_uniform({B, n, 3 * H}, -1, 1, gen, DType::F64);
  const Tensor hw = rand_uniform({B, n, H}, -1, 1, gen, DType::F64);
  const Tensor bias = rand_uniform({2 * H}, -1, 1, gen, DType::F64);
  const Tensor weights = rand_uniform({B, n, H}, -1, 1, gen, DType::F64);
  auto dirty = [&](const Tensor& t) {
    std::vector<double> v = t.to_vector();
    const int64_t w = t.size(2);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t p = lens[b]; p < n; ++p)
        for (int64_t k = 0; k < w; ++k)
          v[(b * n + p) * w + k] =
              k % 2 ? std::numeric_limits<double>::quiet_NaN() : -std::numeric_limits<double>::infinity();
    return from_vector(v, t.shape(), DType::F64);
  };
  for (bool reverse : {false, true}) {
    auto op = [&](const Tensor& a, const Tensor& x, const Tensor& b) { return sru_sequence(a, x, b, mask, reverse); };
    const Grads clean = run(op, u, hw, bias, weights);
    const Grads noisy = run(op, dirty(u), dirty(hw), bias, weights);
    // The same kernel on the same valid values: the same bits.
    EXPECT_EQ(clean.y, noisy.y);
    EXPECT_EQ(clean.du, noisy.du);
    EXPECT_EQ(clean.dhw, noisy.dhw);
    EXPECT_EQ(clean.db, noisy.db);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t p = lens[b]; p < n; ++p) {
        for (int64_t j = 0; j < H; ++j) {
          EXPECT_EQ(noisy.y[(b * n + p) * H + j], 0.0);
          EXPECT_EQ(noisy.dhw[(b * n + p) * H + j], 0.0);
        }
        for (int64_t k = 0; k < 3 * H; ++k) EXPECT_EQ(noisy.du[(b * n + p) * 3 * H + k], 0.0);
      }
  }
}

// Every sentence empty: zero outputs and zero (not missing) gradients.
TEST(Sru, AllEmptySentences) {
  Generator gen(4);
  const Tensor u = rand_uniform({2, 3, 6}, -1, 1, gen, DType::F64);
  const Tensor hw = rand_uniform({2, 3, 2}, -1, 1, gen, DType::F64);
  const Tensor bias = rand_uniform({4}, -1, 1, gen, DType::F64);
  const Grads r = run([](const Tensor& a, const Tensor& x, const Tensor& b) {
    return sru_sequence(a, x, b, length_mask({0, 0}, 3), true);
  }, u, hw, bias, ones({2, 3, 2}, DType::F64));
  for (const std::vector<double>* v : {&r.y, &r.du, &r.dhw, &r.db})
    for (double e : *v) EXPECT_EQ(e, 0.0);
  EXPECT_EQ(r.db.size(), 4u);
}

// float32 at huge magnitudes: the gates saturate (stable sigmoid) and c is a
// convex combination of c_{t-1} and x~, so every output and gradient stays
// finite. At 1e4 the values are also compared with float64: the error of h is
// dominated by (1 - r) x with |x| <= 1e4 and r a few float32 ulps (6e-8 each,
// the CPU's sigmoid within a few) off, ~4 * 6e-8 * 1e4 = 2.4e-3; c (at most
// |x~| <= 1e4) adds ~1e-3 before tanh flattens it. 2e-6 * |big| = 0.02 holds
// with margin, while a wrong term at these magnitudes is off by O(|big|).
TEST(Sru, Float32FiniteUnderExtremeInputs) {
  const std::vector<int64_t> lens{5, 2};
  for (double big : {1e4, -1e4, 1e30, -1e30})
    for (bool reverse : {false, true}) {
      SCOPED_TRACE(testing::Message() << big << (reverse ? " reverse" : ""));
      Generator gen(5);
      // Signs alternate so the gates take both saturated ends.
      const Tensor pattern = rand_uniform({2, 5, 12}, -1, 1, gen, DType::F64) * big;
      const Tensor hw_pattern = rand_uniform({2, 5, 4}, -1, 1, gen, DType::F64) * big;
      std::vector<std::vector<double>> ys;
      for (DType dt : {DType::F32, DType::F64}) {
        const Tensor u = cast(pattern, dt).set_requires_grad(true);
        const Tensor hw = cast(hw_pattern, dt).set_requires_grad(true);
        const Tensor bias = zeros({8}, dt).set_requires_grad(true);
        const Tensor y = sru_sequence(u, hw, bias, length_mask(lens, 5), reverse);
        y.backward(ones(y.shape(), dt));
        for (const Tensor& t : {y, u.grad(), hw.grad(), bias.grad()})
          for (double v : t.to_vector()) ASSERT_TRUE(std::isfinite(v));
        ys.push_back(y.to_vector());
      }
      if (std::abs(big) < 1e5) {
        for (size_t i = 0; i < ys[0].size(); ++i) EXPECT_NEAR(ys[0][i], ys[1][i], 2e-6 * std::abs(big));
      }
    }
}

TEST(Sru, ErrorsNameTheShapes) {
  const Tensor u = zeros({2, 3, 6}, DType::F64);
  auto message = [](const std::function<void()>& f) {
    try {
      f();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message([&] { sru_sequence(zeros({2, 3, 5}, DType::F64), zeros({2, 3, 2}, DType::F64), Tensor(), Tensor(), false); })
                .find("three blocks"),
            std::string::npos);
  EXPECT_NE(message([&] { sru_sequence(u, zeros({2, 3, 3}, DType::F64), Tensor(), Tensor(), false); })
                .find("highway must be [2, 3, 2]"),
            std::string::npos);
  EXPECT_NE(message([&] { sru_sequence(u, zeros({2, 3, 2}, DType::F64), zeros({2}, DType::F64), Tensor(), false); })
                .find("bias must be [4]"),
            std::string::npos);
  Tensor holes = empty({2, 3}, DType::U8);
  const uint8_t values[] = {1, 0, 1, 1, 1, 1};
  for (int i = 0; i < 6; ++i) holes.data<uint8_t>()[i] = values[i];
  EXPECT_NE(message([&] { sru_sequence(u, zeros({2, 3, 2}, DType::F64), Tensor(), holes, false); })
                .find("not a prefix mask"),
            std::string::npos);
}

}  // namespace
}  // namespace attn
