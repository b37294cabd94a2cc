// REINFORCE for ReSAN's RSS modules (seed 004, Sec. 4, Eqs. 17-20).
// Per example, the reward charges the task loss and the share of tokens used:
//   R = -(loss + lambda * selected_fraction)
// and the surrogate whose gradient is the policy gradient estimate is
//   L_rl = mean over the batch of -(R - b) * log pi(z)     (R, b constants)
// backpropagated into the RSS parameters only (log pi depends on nothing
// else). b is an optional moving-average baseline (not in the paper; off by
// default), which lowers the variance without biasing the estimate.
#pragma once
#include <cstdint>
#include <vector>

#include "attn/engine/tensor.h"

namespace attn {

// R_i = -(loss_i + lambda * fraction_i).
std::vector<double> reinforce_rewards(const std::vector<double>& per_example_loss,
                                      const std::vector<double>& selected_fraction, double lambda);

// b <- momentum * b + (1 - momentum) * mean(R), starting from `initial`.
class MovingBaseline {
 public:
  explicit MovingBaseline(double momentum = 0.9, double initial = 0.0);
  double value() const { return value_; }
  double momentum() const { return momentum_; }
  void update(const std::vector<double>& rewards);  // no-op for an empty batch
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
                           MovingBaseline* baseline = nullptr);

// What the trainer does at a step (Sec. 4): first a supervised warm-up with
// every token selected and the RSS untouched, then RL updates alone (the
// rest frozen), then both every step.
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
  // Steps [0, warmup_steps): warm-up; then rl_only_steps of RL alone; then joint.
  ReinforceSchedule(int64_t warmup_steps, int64_t rl_only_steps);
  ReinforcePhase phase(int64_t step) const;
  ReinforceStepPlan plan(int64_t step) const;
  int64_t warmup_steps() const { return warmup_steps_; }
  int64_t rl_only_steps() const { return rl_only_steps_; }

 private:
  int64_t warmup_steps_, rl_only_steps_;
};

}  // namespace attn
