#include "attn/train/reinforce/reinforce.h"

#include <cmath>
#include <limits>
#include <numeric>

#include "attn/engine/error.h"
#include "attn/ops/binary/binary.h"
#include "attn/engine/copy.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/util/named_values.h"

namespace attn {

RewardKind reward_kind_from_name(const std::string& name) {
  if (name == "probability") return RewardKind::Probability;
  if (name == "neg-loss") return RewardKind::NegLoss;
  ATTN_CHECK(false, "reinforce", "unknown reward '", name, "' (known: probability, neg-loss)");
  return RewardKind::Probability;
}

const char* reward_kind_name(RewardKind kind) { return kind == RewardKind::Probability ? "probability" : "neg-loss"; }

std::vector<double> reinforce_rewards(const std::vector<double>& per_example_loss,
                                      const std::vector<double>& selected_fraction, double lambda, RewardKind kind) {
  ATTN_CHECK(per_example_loss.size() == selected_fraction.size(), "reinforce_rewards", "got ",
             per_example_loss.size(), " losses but ", selected_fraction.size(), " selected fractions");
  std::vector<double> r(per_example_loss.size());
  for (size_t i = 0; i < r.size(); ++i) {
    const double paid = kind == RewardKind::Probability ? std::exp(-per_example_loss[i]) : -per_example_loss[i];
    r[i] = paid - lambda * selected_fraction[i];
  }
  return r;
}

MovingBaseline::MovingBaseline(double momentum, double initial) : momentum_(momentum), value_(initial) {
  ATTN_CHECK(momentum >= 0 && momentum < 1, "MovingBaseline", "momentum must be in [0, 1), got ", momentum);
}

void MovingBaseline::update(const std::vector<double>& rewards) {
  if (rewards.empty()) return;
  update_with_mean(std::accumulate(rewards.begin(), rewards.end(), 0.0) / static_cast<double>(rewards.size()));
}

void MovingBaseline::update_with_mean(double mean_reward) {
  value_ = momentum_ * value_ + (1 - momentum_) * mean_reward;
}

Tensor reinforce_surrogate(const Tensor& log_pi, const std::vector<double>& per_example_loss,
                           const std::vector<double>& selected_fraction, double lambda, MovingBaseline* baseline,
                           RewardKind kind) {
  const char* op = "reinforce_surrogate";
  ATTN_CHECK(log_pi.defined() && log_pi.dim() == 1, op, "log_pi must be [B], got ",
             log_pi.defined() ? shape_str(log_pi.shape()) : std::string("undefined"));
  ATTN_CHECK(is_floating(log_pi.dtype()), op, "log_pi must be float32 or float64, got ", dtype_name(log_pi.dtype()));
  const int64_t B = log_pi.size(0);
  ATTN_CHECK(static_cast<int64_t>(per_example_loss.size()) == B, op, "log_pi is ", shape_str(log_pi.shape()),
             " but got ", per_example_loss.size(), " losses");
  ATTN_CHECK(B > 0, op, "empty batch");
  const std::vector<double> rewards = reinforce_rewards(per_example_loss, selected_fraction, lambda, kind);
  for (size_t i = 0; i < rewards.size(); ++i)
    ATTN_CHECK(std::isfinite(rewards[i]), op, "reward ", i, " is not finite (loss ", per_example_loss[i],
               ", fraction ", selected_fraction[i], ")");
  const double b = baseline ? baseline->value() : 0.0;
  if (baseline) baseline->update(rewards);
  return reinforce_surrogate_of_rewards(log_pi, rewards, b, B);
}

Tensor reinforce_surrogate_of_rewards(const Tensor& log_pi, const std::vector<double>& rewards, double baseline,
                                      int64_t whole_batch) {
  const char* op = "reinforce_surrogate";
  const int64_t B = log_pi.size(0);
  ATTN_CHECK(static_cast<int64_t>(rewards.size()) == B && whole_batch >= B, op, "log_pi is ",
             shape_str(log_pi.shape()), " with ", rewards.size(), " rewards and a whole batch of ", whole_batch);
  // coef_i = -(R_i - b) / B: the surrogate is sum_i coef_i * log_pi_i.
  std::vector<double> coef(rewards.size());
  for (size_t i = 0; i < coef.size(); ++i) coef[i] = -(rewards[i] - baseline) / static_cast<double>(whole_batch);
  Tensor c = from_vector(coef, {B}, log_pi.dtype()).to(log_pi.device());
  if (c.device() != log_pi.device()) c = to_device(c, log_pi.device());
  return sum(mul(log_pi, c));
}

namespace {
const NamedValue<ReinforcePhase> kPhaseNames[] = {
    {ReinforcePhase::Warmup, "warmup"}, {ReinforcePhase::RlOnly, "rl_only"}, {ReinforcePhase::Joint, "joint"}};
}  // namespace

const char* reinforce_phase_name(ReinforcePhase phase) { return name_of_value(kPhaseNames, phase); }

ReinforceSchedule::ReinforceSchedule(int64_t warmup_steps, int64_t rl_only_steps)
    : warmup_steps_(warmup_steps), rl_only_steps_(rl_only_steps) {
  ATTN_CHECK(warmup_steps >= 0 && rl_only_steps >= 0, "ReinforceSchedule",
             "step counts must be >= 0, got warmup ", warmup_steps, ", rl_only ", rl_only_steps);
}

ReinforcePhase ReinforceSchedule::phase(int64_t step) const {
  ATTN_CHECK(step >= 0, "ReinforceSchedule", "step must be >= 0, got ", step);
  if (step < warmup_steps_) return ReinforcePhase::Warmup;  // also every step of an open-ended warm-up
  if (step - warmup_steps_ < rl_only_steps_) return ReinforcePhase::RlOnly;
  return ReinforcePhase::Joint;
}

void ReinforceSchedule::end_warmup_at(int64_t step) {
  ATTN_CHECK(step >= 0, "ReinforceSchedule", "step must be >= 0, got ", step);
  warmup_steps_ = step;
}

ReinforceStepPlan ReinforceSchedule::plan(int64_t step) const {
  ReinforceStepPlan p;
  p.phase = phase(step);
  p.select_all = p.phase == ReinforcePhase::Warmup;
  p.supervised_update = p.phase != ReinforcePhase::RlOnly;
  p.rl_update = p.phase != ReinforcePhase::Warmup;
  return p;
}

DevLossWarmup::DevLossWarmup(double min_relative_decrease)
    : min_relative_decrease_(min_relative_decrease), previous_(std::numeric_limits<double>::infinity()) {
  ATTN_CHECK(min_relative_decrease >= 0 && min_relative_decrease < 1, "DevLossWarmup",
             "the minimum relative decrease must be in [0, 1), got ", min_relative_decrease);
}

bool DevLossWarmup::observe(double dev_loss) {
  ATTN_CHECK(std::isfinite(dev_loss), "DevLossWarmup", "the dev loss is not finite: ", dev_loss);
  const double before = previous_;
  previous_ = dev_loss;
  if (!std::isfinite(before)) return false;  // the first evaluation has nothing to compare with
  return before - dev_loss < min_relative_decrease_ * std::fabs(before);
}

}  // namespace attn
