// REINFORCE for ReSAN's RSS modules (seed 004, Sec. 4, Eqs. 17-20).
// Per example, the reward pays for a correct prediction and charges the share
// of tokens the RSS modules selected (f = sum of z over len(x), both RSS
// modules counted):
//   probability (Eq. 17, the default):  R = p(y = y* | x) - lambda * f
//   neg-loss (the released code):       R = -(loss + lambda * f)
// p(y* | x) is exp(-loss) of the example's cross-entropy (for relatedness,
// exp(-KL), the same quantity for a one-hot target). docs/training.md says
// why the penalty's sign is minus although Eq. 17 prints a plus.
// The surrogate whose gradient is the policy gradient estimate is
//   L_rl = mean over the batch of -(R - b) * log pi(z)     (R, b constants)
// backpropagated into the RSS parameters only (log pi depends on nothing
// else). b is an optional moving-average baseline (not in the paper; off by
// default), which lowers the variance without biasing the estimate.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "attn/engine/tensor.h"

namespace attn {

enum class RewardKind { Probability, NegLoss };
RewardKind reward_kind_from_name(const std::string& name);  // "probability", "neg-loss"
const char* reward_kind_name(RewardKind kind);

// R_i for each example (see the top of this file).
std::vector<double> reinforce_rewards(const std::vector<double>& per_example_loss,
                                      const std::vector<double>& selected_fraction, double lambda,
                                      RewardKind kind = RewardKind::Probability);

// b <- momentum * b + (1 - momentum) * mean(R), starting from `initial`.
class MovingBaseline {
 public:
  explicit MovingBaseline(double momentum = 0.9, double initial = 0.0);
  double value() const { return value_; }
  double momentum() const { return momentum_; }
  void update(const std::vector<double>& rewards);  // no-op for an empty batch
  void update_with_mean(double mean_reward);
  void set_value(double value) { value_ = value; }  // for resuming a run

 private:
  double momentum_;
  double value_;
};

// The surrogate loss: a differentiable scalar (log_pi's dtype and device)
// whose gradient w.r.t. log_pi [B] is -(R_i - b) / B. With a baseline, the
// advantage uses the baseline's value before this batch, then the baseline
// is updated with this batch's rewards.
Tensor reinforce_surrogate(const Tensor& log_pi, const std::vector<double>& per_example_loss,
                           const std::vector<double>& selected_fraction, double lambda,
                           MovingBaseline* baseline = nullptr, RewardKind kind = RewardKind::Probability);

// The same surrogate from rewards already computed, a baseline value b and
// the whole batch's size: a data-parallel process holds a share of the batch,
// and the shares' gradients -(R_i - b) / whole_batch add up to the batch's.
Tensor reinforce_surrogate_of_rewards(const Tensor& log_pi, const std::vector<double>& rewards, double baseline,
                                      int64_t whole_batch);

// What the trainer does at a step (Sec. 4): first a supervised warm-up with
// every token selected and the RSS untouched, then optionally RL updates
// alone (the rest frozen; not in the paper, 0 steps by default), then both
// every step ("theta_r and theta_s are then optimized simultaneously").
enum class ReinforcePhase { Warmup, RlOnly, Joint };
const char* reinforce_phase_name(ReinforcePhase phase);

struct ReinforceStepPlan {
  ReinforcePhase phase = ReinforcePhase::Joint;
  bool select_all = false;         // force z = 1 (Encoder::set_select_all)
  bool supervised_update = false;  // step the optimiser of theta_s on the task loss (+ weight decay)
  bool rl_update = false;          // step the optimiser of theta_r on the surrogate
};

class ReinforceSchedule {
 public:
  static constexpr int64_t kOpenEnded = INT64_MAX;  // warm-up until end_warmup_at()
  // Steps [0, warmup_steps): warm-up; then rl_only_steps of RL alone; then joint.
  ReinforceSchedule(int64_t warmup_steps, int64_t rl_only_steps);
  ReinforcePhase phase(int64_t step) const;
  ReinforceStepPlan plan(int64_t step) const;
  // Ends an open-ended warm-up: steps from `step` on are past it.
  void end_warmup_at(int64_t step);
  bool warmup_open() const { return warmup_steps_ == kOpenEnded; }
  int64_t warmup_steps() const { return warmup_steps_; }
  int64_t rl_only_steps() const { return rl_only_steps_; }

 private:
  int64_t warmup_steps_, rl_only_steps_;
};

// The paper's warm-up length: "theta_s is optimized for several beginning
// epochs until the loss over development set does not decrease
// significantly". Fed the dev loss of each evaluation during the warm-up,
// it says the warm-up is over when the loss fell by less than
// `min_relative_decrease` (a fraction of the previous dev loss; the paper
// gives no number) since the previous evaluation, or rose.
class DevLossWarmup {
 public:
  explicit DevLossWarmup(double min_relative_decrease = 0.01);
  // True when the warm-up should end after this evaluation.
  bool observe(double dev_loss);
  double previous() const { return previous_; }    // +inf before the first evaluation
  void set_previous(double loss) { previous_ = loss; }  // for resuming a run
  double min_relative_decrease() const { return min_relative_decrease_; }

 private:
  double min_relative_decrease_;
  double previous_;
};

}  // namespace attn
