// REINFORCE for ReSAN: the reward, the surrogate's gradient, the moving
// baseline, the warm-up / RL-only / joint schedule, and an end-to-end check
// that the estimator drives a Bernoulli policy's selection rate down when
// every selected token costs reward.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "test_util.h"
#include "attn/engine/error.h"
#include "attn/engine/random.h"
#include "attn/ops/binary/binary.h"
#include "attn/ops/unary/unary.h"
#include "attn/train/optim/adam.h"
#include "attn/train/reinforce/reinforce.h"
#include "attn/train/optim/sgd.h"

namespace attn {
namespace {

using namespace testing_support;

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Tensor leaf(const std::vector<double>& v, DType dtype = DType::F64) {
  Tensor t = from_vector(v, {static_cast<int64_t>(v.size())}, dtype);
  t.set_requires_grad();
  return t;
}

TEST(Reinforce, NegLossRewardChargesLossAndTokenUse) {
  std::vector<double> r = reinforce_rewards({0.5, 1.0}, {0.2, 1.0}, 0.01, RewardKind::NegLoss);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_NEAR(r[0], -0.502, 1e-15);
  EXPECT_NEAR(r[1], -1.01, 1e-15);
  EXPECT_THAT(error_of([] { reinforce_rewards({1.0}, {}, 0.1); }), HasSubstr("got 1 losses but 0 selected fractions"));
}

TEST(Reinforce, DefaultRewardIsEq17sProbabilityOfTheGoldLabel) {
  // R = p(y = y* | x) - lambda * f, p = exp(-cross-entropy).
  const double p0 = 0.6, p1 = 0.25;
  std::vector<double> r = reinforce_rewards({-std::log(p0), -std::log(p1)}, {0.5, 2.0}, 0.02);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_NEAR(r[0], p0 - 0.02 * 0.5, 1e-15);
  EXPECT_NEAR(r[1], p1 - 0.02 * 2.0, 1e-15);
  EXPECT_EQ(reward_kind_from_name("probability"), RewardKind::Probability);
  EXPECT_EQ(reward_kind_from_name("neg-loss"), RewardKind::NegLoss);
  EXPECT_STREQ(reward_kind_name(RewardKind::Probability), "probability");
  EXPECT_THAT(error_of([] { reward_kind_from_name("accuracy"); }), HasSubstr("unknown reward 'accuracy'"));
}

TEST(Reinforce, DevLossWarmupEndsWhenTheDevLossStopsFalling) {
  DevLossWarmup w(0.05);
  EXPECT_FALSE(w.observe(1.0));    // nothing to compare with
  EXPECT_FALSE(w.observe(0.9));    // 10% lower
  EXPECT_FALSE(w.observe(0.85));   // 5.6% lower
  EXPECT_TRUE(w.observe(0.83));    // 2.4% lower: not significant
  DevLossWarmup rising(0.01);
  rising.observe(0.5);
  EXPECT_TRUE(rising.observe(0.6));
  EXPECT_THROW(DevLossWarmup(1.0), Error);
  EXPECT_THROW(DevLossWarmup(-0.1), Error);
  EXPECT_THROW(rising.observe(std::nan("")), Error);
}

TEST(Reinforce, OpenEndedWarmupLastsUntilEnded) {
  ReinforceSchedule s(ReinforceSchedule::kOpenEnded, 0);
  EXPECT_TRUE(s.warmup_open());
  EXPECT_EQ(s.phase(1000000), ReinforcePhase::Warmup);
  s.end_warmup_at(7);
  EXPECT_FALSE(s.warmup_open());
  EXPECT_EQ(s.phase(6), ReinforcePhase::Warmup);
  EXPECT_EQ(s.phase(7), ReinforcePhase::Joint);  // no RL-only steps: both at once, as the paper
  EXPECT_TRUE(s.plan(7).rl_update && s.plan(7).supervised_update && !s.plan(7).select_all);
}

TEST(Reinforce, SurrogateGradientIsMinusRewardOverBatch) {
  const std::vector<double> lp = {-0.7, -2.0, -0.1}, loss = {0.3, 1.2, 0.05}, frac = {0.5, 1.0, 0.25};
  const double lambda = 0.02;
  Tensor log_pi = leaf(lp);
  Tensor s = reinforce_surrogate(log_pi, loss, frac, lambda, nullptr, RewardKind::NegLoss);
  EXPECT_EQ(s.dim(), 0);
  double want = 0;
  std::vector<double> g = (s.backward(), log_pi.grad().to_vector());
  for (int i = 0; i < 3; ++i) {
    const double R = -(loss[i] + lambda * frac[i]);
    want += -R * lp[i] / 3;
    EXPECT_NEAR(g[i], -R / 3, 1e-15) << i;
  }
  EXPECT_NEAR(s.item(), want, 1e-15);
}

TEST(Reinforce, SurrogateWorksInFloat32) {
  Tensor log_pi = leaf({-1.0, -0.5}, DType::F32);
  Tensor s = reinforce_surrogate(log_pi, {1.0, 2.0}, {0.0, 0.0}, 0.0, nullptr, RewardKind::NegLoss);
  EXPECT_EQ(s.dtype(), DType::F32);
  s.backward();
  EXPECT_THAT(log_pi.grad().to_vector(), ElementsAre(0.5, 1.0));
}

TEST(Reinforce, BaselineUpdateAndAdvantage) {
  MovingBaseline b(0.9);
  EXPECT_EQ(b.value(), 0.0);
  b.update({1.0, 3.0});
  EXPECT_NEAR(b.value(), 0.2, 1e-15);
  b.update({1.0, 3.0});
  EXPECT_NEAR(b.value(), 0.38, 1e-15);
  b.update({});
  EXPECT_NEAR(b.value(), 0.38, 1e-15);

  // The advantage uses the baseline before this batch; then the baseline moves.
  MovingBaseline base(0.5, -1.0);
  Tensor log_pi = leaf({-1.0, -2.0});
  reinforce_surrogate(log_pi, {0.0, 2.0}, {0.0, 0.0}, 0.0, &base, RewardKind::NegLoss).backward();
  // R = {0, -2}; R - b = {1, -1}; gradient -(R - b) / 2.
  EXPECT_THAT(log_pi.grad().to_vector(), ElementsAre(-0.5, 0.5));
  EXPECT_NEAR(base.value(), 0.5 * -1.0 + 0.5 * -1.0, 1e-15);
  EXPECT_THAT(error_of([] { MovingBaseline bad(1.0); }), HasSubstr("momentum must be in [0, 1)"));
}

TEST(Reinforce, SurrogateChecksItsInputs) {
  Tensor log_pi = leaf({-1.0, -2.0});
  EXPECT_THAT(error_of([&] { reinforce_surrogate(log_pi, {1.0}, {0.0}, 0.1); }),
              HasSubstr("log_pi is [2] but got 1 losses"));
  EXPECT_THAT(error_of([&] { reinforce_surrogate(from_vector({1, 2, 3, 4}, {2, 2}), {1, 2}, {0, 0}, 0.1); }),
              HasSubstr("log_pi must be [B], got [2, 2]"));
  EXPECT_THAT(error_of([&] { reinforce_surrogate(log_pi, {1.0, NAN}, {0.0, 0.0}, 0.1); }),
              HasSubstr("reward 1 is not finite"));
}

TEST(Reinforce, SchedulePhases) {
  ReinforceSchedule s(3, 2);
  for (int64_t step : {0, 1, 2}) {
    ReinforceStepPlan p = s.plan(step);
    EXPECT_EQ(p.phase, ReinforcePhase::Warmup);
    EXPECT_TRUE(p.select_all);
    EXPECT_TRUE(p.supervised_update);
    EXPECT_FALSE(p.rl_update);
  }
  for (int64_t step : {3, 4}) {
    ReinforceStepPlan p = s.plan(step);
    EXPECT_EQ(p.phase, ReinforcePhase::RlOnly);
    EXPECT_FALSE(p.select_all);
    EXPECT_FALSE(p.supervised_update);
    EXPECT_TRUE(p.rl_update);
  }
  for (int64_t step : {5, 1000}) {
    ReinforceStepPlan p = s.plan(step);
    EXPECT_EQ(p.phase, ReinforcePhase::Joint);
    EXPECT_FALSE(p.select_all);
    EXPECT_TRUE(p.supervised_update);
    EXPECT_TRUE(p.rl_update);
  }
  EXPECT_EQ(ReinforceSchedule(0, 0).phase(0), ReinforcePhase::Joint);
  EXPECT_EQ(ReinforceSchedule(0, 1).phase(0), ReinforcePhase::RlOnly);
  EXPECT_STREQ(reinforce_phase_name(ReinforcePhase::RlOnly), "rl_only");
  EXPECT_THAT(error_of([] { ReinforceSchedule(-1, 0); }), HasSubstr("step counts must be >= 0"));
}

// A one-parameter Bernoulli policy: every example selects its token with
// probability sigmoid(theta); the reward is minus the fraction selected.
double train_selection_probability(bool with_baseline) {
  Tensor theta = leaf({0.0});
  Sgd opt({theta}, 1.0);
  Generator gen(11);
  MovingBaseline baseline(0.9);
  const int64_t B = 16;
  for (int step = 0; step < 300; ++step) {
    const double p = 1.0 / (1.0 + std::exp(-theta.item()));
    std::vector<double> z(B), loss(B, 0.0);
    for (int64_t i = 0; i < B; ++i) z[i] = gen.bernoulli(p) ? 1.0 : 0.0;
    Tensor zt = from_vector(z, {B}, DType::F64);
    Tensor logits = mul(ones({B}, DType::F64), theta);
    Tensor log_pi = add(mul(zt, log_sigmoid(logits)), mul(1.0 - zt, log_sigmoid(neg(logits))));
    opt.zero_grad();
    reinforce_surrogate(log_pi, loss, z, 1.0, with_baseline ? &baseline : nullptr, RewardKind::NegLoss).backward();
    opt.step();
  }
  return 1.0 / (1.0 + std::exp(-theta.item()));
}

TEST(Reinforce, PolicyGradientDrivesSelectionDownWhenTokensCost) {
  EXPECT_LT(train_selection_probability(false), 0.05);
  EXPECT_LT(train_selection_probability(true), 0.05);
  EXPECT_EQ(train_selection_probability(false), train_selection_probability(false));  // deterministic from the seed
}

}  // namespace
}  // namespace attn
