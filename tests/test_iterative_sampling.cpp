// Iterative sampling (seed 004, appendix A): the recurrence against a loop
// computation of Eqs. 22-25, gradchecks of the logits along a fixed
// selection and of log pi(z), the conditioning of Eq. 21 (a_i reads z_1..z_{i-1}
// only), padding, a distribution that sums to one over every selection,
// draws that follow it, the REINFORCE estimator against the exact policy
// gradient, evaluation modes, example-keyed draws, and ReSAN built with it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "model_checks.h"
#include "seeded_encoder_context.h"
#include "test_util.h"
#include "attn/engine/copy.h"
#include "attn/engine/error.h"
#include "attn/models/iterative_sampling.h"
#include "attn/models/masks.h"
#include "attn/models/resan.h"
#include "attn/ops/binary/binary.h"
#include "attn/ops/dropout/dropout_example_keys.h"
#include "attn/ops/join/join.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/ops/unary/unary.h"
#include "attn/ops/view/view.h"
#include "attn/train/reinforce/reinforce.h"

namespace attn {
namespace {

using namespace testing_support;

using ::testing::HasSubstr;

Tensor u8(const std::vector<double>& v, const Shape& shape) { return cast(from_vector(v, shape, DType::F64), DType::U8); }

// Input width 2, hidden layer 3, state 2: every block of both weights is a
// few numbers, so the float64 checks stay well under a second.
IterativeSampler small_sampler(uint64_t init_seed, Generator& noise, RssEval eval = RssEval::Threshold) {
  Generator init(init_seed);
  return IterativeSampler(2, 3, 2, Activation::Elu, eval, init, noise, DType::F64);
}

// Eqs. 22-25 for example b by loops over the module's parameters.
std::vector<double> logits_ref(const IterativeSampler& s, const Tensor& x, const Tensor& valid, const Tensor& z,
                               int64_t b) {
  auto p = params_of(s);
  const int64_t n = x.size(1), d = x.size(2), state = p["rnn.weight"].size(0), hidden = p["proj.weight"].size(0);
  std::vector<double> xbar(static_cast<size_t>(d), 0.0);
  double count = 0;
  for (int64_t i = 0; i < n; ++i)
    if (valid.at({b, i}) != 0) {
      count += 1;
      for (int64_t k = 0; k < d; ++k) xbar[k] += x.at({b, i, k});
    }
  for (double& v : xbar) v /= std::max(count, 1.0);
  std::vector<double> h(static_cast<size_t>(state), 0.0), out;
  for (int64_t i = 0; i < n; ++i) {
    std::vector<double> f;
    for (int64_t k = 0; k < d; ++k) f.push_back(valid.at({b, i}) != 0 ? x.at({b, i, k}) : 0.0);
    for (int64_t k = 0; k < d; ++k) f.push_back(xbar[k]);
    for (int64_t k = 0; k < d; ++k) f.push_back(f[k] * xbar[k]);
    double a = p["out.bias"].at({0});
    for (int64_t o = 0; o < hidden; ++o) {
      double pre = p["proj.bias"].at({o});
      for (int64_t k = 0; k < state; ++k) pre += p["proj.weight"].at({o, k}) * h[k];
      for (int64_t k = 0; k < 3 * d; ++k) pre += p["proj.weight"].at({o, state + k}) * f[k];
      a += p["out.weight"].at({0, o}) * (pre > 0 ? pre : std::exp(pre) - 1.0);
    }
    out.push_back(a);
    if (valid.at({b, i}) == 0) continue;  // the state passes padding unchanged
    const double zi = z.at({b, i});
    std::vector<double> next(static_cast<size_t>(state));
    for (int64_t o = 0; o < state; ++o) {
      double acc = p["rnn.bias"].at({o}) + p["rnn.weight"].at({o, 3 * d}) * zi;
      for (int64_t k = 0; k < 3 * d; ++k) acc += p["rnn.weight"].at({o, k}) * f[k];
      for (int64_t k = 0; k < state; ++k) acc += p["rnn.weight"].at({o, 3 * d + 1 + k}) * h[k];
      next[o] = std::tanh(acc);
    }
    h = next;
  }
  return out;
}

TEST(IterativeSampling, LogitsAlongASelectionMatchLoopComputation) {
  Generator noise(1);
  IterativeSampler s = small_sampler(2, noise);
  Tensor x = random_input({2, 5, 2}, 3).detach();
  Tensor mask = length_mask({5, 3}, 5);
  Tensor z = u8({1, 0, 1, 1, 0, 0, 1, 1, 0, 0}, {2, 5});
  Tensor a = s.logits_along(x, mask, z);
  ASSERT_EQ(a.shape(), (Shape{2, 5}));
  for (int64_t b = 0; b < 2; ++b) {
    std::vector<double> ref = logits_ref(s, x, mask, z, b);
    // O(1) sums of a few dozen float64 products per step over five steps.
    for (int64_t i = 0; i < 5; ++i) {
      if (mask.at({b, i}) == 0) continue;
      EXPECT_NEAR(a.at({b, i}), ref[i], 1e-12) << "example " << b << " token " << i;
    }
  }
}

TEST(IterativeSampling, GradcheckLogitsAlongFixedSelectionWithPaddingAndLengthOne) {
  Generator noise(4);
  IterativeSampler s = small_sampler(5, noise);
  Tensor x = random_input({2, 3, 2}, 6);
  Tensor mask = length_mask({3, 1}, 3);
  Tensor z = u8({1, 0, 1, 1, 0, 0}, {2, 3});
  expect_gradcheck(s, x, [&] { return s.logits_along(x, mask, z); });
}

TEST(IterativeSampling, GradcheckLogPiOfAFixedSelection) {
  Generator noise(7);
  IterativeSampler s = small_sampler(8, noise);
  Tensor x = random_input({3, 4, 2}, 9);
  Tensor mask = length_mask({4, 1, 3}, 4);
  Tensor z = s.forward(x, mask).z;  // drawn once (training mode), then held fixed
  expect_gradcheck(s, x, [&] { return rss_log_prob(s.logits_along(x, mask, z), z, mask); });
}

// Eq. 21: p(z_i | x, z_1..z_{i-1}). Flipping z_j leaves a_1..a_j exactly as
// they were (the same computation on the same numbers) and moves a_{j+1}.
TEST(IterativeSampling, EachLogitReadsOnlyTheEarlierSelections) {
  Generator noise(10);
  IterativeSampler s = small_sampler(11, noise);
  Tensor x = random_input({1, 4, 2}, 12).detach();
  Tensor mask = length_mask({4}, 4);
  std::vector<double> base = {1, 0, 1, 0};
  Tensor a = s.logits_along(x, mask, u8(base, {1, 4}));
  for (int64_t j = 0; j < 3; ++j) {
    std::vector<double> flipped = base;
    flipped[j] = 1 - flipped[j];
    Tensor b = s.logits_along(x, mask, u8(flipped, {1, 4}));
    for (int64_t i = 0; i <= j; ++i) EXPECT_EQ(a.at({0, i}), b.at({0, i})) << "flip " << j << " token " << i;
    EXPECT_GT(std::abs(a.at({0, j + 1}) - b.at({0, j + 1})), 1e-9) << "flip " << j;
  }
}

// A padded position between valid tokens draws nothing and passes the state
// on: the valid tokens' logits equal those of the sequence without it.
TEST(IterativeSampling, PaddingNeitherDrawsNorMovesTheState) {
  Generator noise(13);
  IterativeSampler s = small_sampler(14, noise);
  Tensor compact = random_input({1, 3, 2}, 15).detach();
  Tensor spread = zeros({1, 5, 2}, DType::F64);
  const int64_t where_to[3] = {0, 2, 3};
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t k = 0; k < 2; ++k) write_element(spread, (where_to[i] * 2) + k, compact.at({0, i, k}));
  write_element(spread, 1 * 2, 40.0);  // padded rows hold anything
  Tensor spread_mask = u8({1, 0, 1, 1, 0}, {1, 5});
  Tensor a = s.logits_along(compact, length_mask({3}, 3), u8({1, 0, 1}, {1, 3}));
  Tensor b = s.logits_along(spread, spread_mask, u8({1, 1, 0, 1, 1}, {1, 5}));
  for (int64_t i = 0; i < 3; ++i) EXPECT_NEAR(a.at({0, i}), b.at({0, where_to[i]}), 1e-12) << i;

  RssSample drawn = s.forward(spread, spread_mask);  // training mode: sampled
  EXPECT_EQ(drawn.z.at({0, 1}), 0.0);
  EXPECT_EQ(drawn.z.at({0, 4}), 0.0);
  for (double v : drawn.logits.to_vector()) EXPECT_TRUE(std::isfinite(v));
}

// Every selection z in {0, 1}^n of an example with n valid tokens.
std::vector<std::vector<double>> every_selection(int64_t n) {
  std::vector<std::vector<double>> all;
  for (int64_t code = 0; code < (int64_t{1} << n); ++code) {
    std::vector<double> z;
    for (int64_t i = 0; i < n; ++i) z.push_back(static_cast<double>((code >> i) & 1));
    all.push_back(z);
  }
  return all;
}

TEST(IterativeSampling, ProbabilitiesOfEverySelectionSumToOne) {
  Generator noise(16);
  IterativeSampler s = small_sampler(17, noise);
  Tensor x = random_input({1, 4, 2}, 18).detach();
  Tensor mask = length_mask({3}, 4);  // the padded fourth token must not split the mass
  double total = 0;
  for (std::vector<double> z : every_selection(3)) {
    z.push_back(0);
    Tensor zt = u8(z, {1, 4});
    total += std::exp(rss_log_prob(s.logits_along(x, mask, zt), zt, mask).item());
  }
  // Eight probabilities in (0, 1), each a product of three sigmoids.
  EXPECT_NEAR(total, 1.0, 1e-13);
}

// One example repeated over a large batch, two tokens: the four selections'
// draw frequencies, and the REINFORCE estimator of the trainer's surrogate
// against the exact policy gradient -sum_z R(z) grad pi(z), both within five
// standard errors computed from the exact distribution.
struct TwoTokenPolicy {
  static constexpr int64_t kBatch = 4000;
  Generator noise{19};
  IterativeSampler s = small_sampler(20, noise);
  Tensor x1 = random_input({1, 2, 2}, 21).detach();
  Tensor mask1 = length_mask({2}, 2);
  const std::vector<std::vector<double>> selections = every_selection(2);
  const std::vector<double> rewards = {0.3, -1.2, 2.0, 0.7};  // R(z) by selection code

  Tensor log_pi(const std::vector<double>& z) const {
    Tensor zt = u8(z, {1, 2});
    return rss_log_prob(s.logits_along(x1, mask1, zt), zt, mask1);
  }
  static int64_t code_of(const Tensor& z, int64_t b) {
    return static_cast<int64_t>(z.at({b, 0})) + 2 * static_cast<int64_t>(z.at({b, 1}));
  }
  // Every parameter's gradient, flattened in parameter order.
  std::vector<double> gradients() const {
    std::vector<double> g;
    for (const Tensor& p : s.parameters()) {
      if (p.grad().defined()) {
        for (double v : p.grad().to_vector()) g.push_back(v);
      } else {
        for (int64_t k = 0; k < p.numel(); ++k) g.push_back(0.0);
      }
      p.zero_grad();
    }
    return g;
  }
};

TEST(IterativeSampling, DrawsFollowTheProbabilitiesOfLogPi) {
  TwoTokenPolicy t;
  Tensor xs = expand(t.x1, {TwoTokenPolicy::kBatch, 2, 2});
  Tensor mask = length_mask(std::vector<int64_t>(TwoTokenPolicy::kBatch, 2), 2);
  Tensor z = t.s.forward(contiguous(xs), mask).z;
  std::vector<double> seen(4, 0.0);
  for (int64_t b = 0; b < TwoTokenPolicy::kBatch; ++b) seen[TwoTokenPolicy::code_of(z, b)] += 1;
  for (int64_t c = 0; c < 4; ++c) {
    const double pi = std::exp(t.log_pi(t.selections[c]).item());
    const double se = std::sqrt(pi * (1 - pi) / TwoTokenPolicy::kBatch);
    EXPECT_NEAR(seen[c] / TwoTokenPolicy::kBatch, pi, 5 * se) << "selection " << c;
  }
}

TEST(IterativeSampling, ReinforceEstimatorMatchesTheExactPolicyGradient) {
  TwoTokenPolicy t;
  // Exact: grad of -E[R] = -sum_z R(z) pi(z) grad log pi(z); and the
  // per-sample estimator's variance from the same enumeration.
  std::vector<std::vector<double>> score;  // grad log pi(z) per selection
  std::vector<double> pi;
  for (const auto& z : t.selections) {
    Tensor lp = t.log_pi(z);
    pi.push_back(std::exp(lp.item()));
    lp.backward();
    score.push_back(t.gradients());
  }
  const size_t m = score[0].size();
  std::vector<double> exact(m, 0.0), second(m, 0.0);
  for (size_t c = 0; c < 4; ++c)
    for (size_t k = 0; k < m; ++k) {
      const double term = -t.rewards[c] * score[c][k];
      exact[k] += pi[c] * term;
      second[k] += pi[c] * term * term;
    }
  double largest = 0;
  for (double v : exact) largest = std::max(largest, std::abs(v));
  ASSERT_GT(largest, 1e-3) << "the exact policy gradient must not vanish";

  // Estimated: the trainer's surrogate over one sampled batch.
  Tensor xs = contiguous(expand(t.x1, {TwoTokenPolicy::kBatch, 2, 2}));
  Tensor mask = length_mask(std::vector<int64_t>(TwoTokenPolicy::kBatch, 2), 2);
  RssSample drawn = t.s.forward(xs, mask);
  std::vector<double> r;
  for (int64_t b = 0; b < TwoTokenPolicy::kBatch; ++b) r.push_back(t.rewards[TwoTokenPolicy::code_of(drawn.z, b)]);
  reinforce_surrogate_of_rewards(drawn.log_pi, r, 0.0, TwoTokenPolicy::kBatch).backward();
  std::vector<double> estimate = t.gradients();
  for (size_t k = 0; k < m; ++k) {
    const double se = std::sqrt(std::max(second[k] - exact[k] * exact[k], 0.0) / TwoTokenPolicy::kBatch);
    EXPECT_NEAR(estimate[k], exact[k], 5 * se + 1e-12) << "component " << k;
  }
}

TEST(IterativeSampling, EvaluationThresholdsAlongTheRecurrenceAndSelectAllTakesEveryToken) {
  Generator noise(22);
  IterativeSampler s = small_sampler(23, noise);
  Tensor x = random_input({3, 5, 2}, 24).detach();
  Tensor mask = length_mask({5, 3, 0}, 5);
  s.set_training(false);
  RssSample e = s.forward(x, mask);
  for (int64_t b = 0; b < 3; ++b)
    for (int64_t i = 0; i < 5; ++i)
      EXPECT_EQ(e.z.at({b, i}), mask.at({b, i}) != 0 && e.logits.at({b, i}) >= 0 ? 1.0 : 0.0);
  EXPECT_LT(max_abs_diff(e.logits, s.logits_along(x, mask, e.z)), 1e-12);
  EXPECT_EQ(e.log_pi.at({2}), 0.0);  // an empty example
  EXPECT_EQ(e.fraction.at({2}), 0.0);

  s.set_training(true);
  s.set_select_all(true);
  RssSample all = s.forward(x, mask);
  EXPECT_EQ(all.z.to_vector(), mask.to_vector());
  EXPECT_LT(max_abs_diff(all.log_pi, rss_log_prob(s.logits_along(x, mask, mask), mask, mask)), 1e-12);
}

// Inside a training step's ExampleNoiseKeys scope an example draws the same
// selection alone as beside another, longer example, and so does the next
// forward: a forward takes one seed from the noise generator, whatever the
// batch's padded length (a data-parallel process pads to its own share).
TEST(IterativeSampling, DrawsAreKeyedOnTheExample) {
  Tensor both = random_input({2, 9, 2}, 25).detach();
  Tensor alone = contiguous(narrow(narrow(both, 0, 1, 1), 1, 0, 6));
  auto draw = [](const Tensor& x, const Tensor& mask, std::vector<uint64_t> keys) {
    Generator noise(26);
    IterativeSampler s = small_sampler(27, noise);
    ExampleNoiseKeys scope(std::move(keys));
    Tensor first = s.forward(x, mask).z;
    return concat({first, s.forward(x, mask).z}, 1);
  };
  Tensor z2 = draw(both, length_mask({9, 6}, 9), {7, 9});
  Tensor z1 = draw(alone, length_mask({6}, 6), {9});
  double ones = 0;
  for (int64_t pass = 0; pass < 2; ++pass)
    for (int64_t i = 0; i < 6; ++i) {
      EXPECT_EQ(z2.at({1, pass * 9 + i}), z1.at({0, pass * 6 + i})) << "forward " << pass << " token " << i;
      ones += z1.at({0, pass * 6 + i});
    }
  EXPECT_GT(ones, 0.0);
  EXPECT_LT(ones, 12.0);
}

TEST(IterativeSampling, ShapeErrors) {
  Generator noise(28);
  IterativeSampler s = small_sampler(29, noise);
  Tensor mask = length_mask({3}, 3);
  EXPECT_THAT(error_of([&] { s.forward(zeros({1, 3, 4}, DType::F64), mask); }),
              HasSubstr("iterative_sampling: expects x of shape [B, n, 2], got [1, 3, 4]"));
  EXPECT_THAT(error_of([&] { s.logits_along(zeros({1, 3, 2}, DType::F64), mask, zeros({1, 3}, DType::F64)); }),
              HasSubstr("selection z must be uint8 [1, 3], got float64 [1, 3]"));
}

TEST(IterativeSampling, ResanBuildsItForBothSelections) {
  SeededEncoderContext ctx(3, 30, 31);
  Config c = Config::parse("hidden = 2\nrss_hidden = 3\nrss_kind = iterative\n");
  std::unique_ptr<Encoder> e = build_resan_encoder(c, ctx);
  c.check_all_used("resan");
  auto& model = static_cast<Resan&>(*e);
  auto p = params_of(model);
  // Eq. 22's layer over [h; f] and the RNN over [f; z; h], f 3 * 3 wide.
  EXPECT_EQ(p.at("rss_head.proj.weight").shape(), (Shape{3, 3 + 9}));
  EXPECT_EQ(p.at("rss_dep.rnn.weight").shape(), (Shape{3, 9 + 1 + 3}));
  EXPECT_EQ(p.count("rss_head.fc.weight"), 0u);
  EXPECT_TRUE(model.has_selection_policy());
  for (const auto& [name, t] : model.named_rss_parameters()) EXPECT_EQ(name.rfind("rss_", 0), 0u) << name;
  EXPECT_EQ(model.rss_parameters().size(), 12u);  // proj, out, rnn (weight, bias) per module

  Tensor x = random_input({2, 4, 3}, 32);
  Tensor mask = length_mask({4, 2}, 4);
  model.encode(x, mask);
  PolicySelection sel = model.policy_selection();
  ASSERT_EQ(sel.log_pi.shape(), (Shape{2}));
  EXPECT_TRUE(sel.log_pi.requires_grad());
  sum(sel.log_pi).backward();
  double reached = 0;
  for (const Tensor& t : model.rss_parameters())
    for (double v : t.grad().to_vector()) reached += std::abs(v);
  EXPECT_GT(reached, 0.0);
}

}  // namespace
}  // namespace attn
