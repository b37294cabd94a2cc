// Learning-rate schedules: a rate per optimiser step, applied by the caller
// with Optimizer::set_lr before each step.
//
// `rsqrt_warmup` is tensor2tensor's schedule of the Transformer
// (learning_rate_decay_scheme "noam", the legacy
// "linear_warmup_rsqrt_decay"), Vaswani et al. (2017) Eq. 3 scaled by the
// hparams' learning_rate:
//   lr(s) = learning_rate * 5000 * 0.002 * D^-0.5 * min((s + 1) w^-1.5, (s + 1)^-0.5)
// for the 0-based step s, warm-up steps w and model width D; 0.002 is the
// correction t2t applies to the rate of Adam. It rises linearly for w steps,
// peaks at learning_rate * 10 / sqrt(D w), then decays as 1 / sqrt(s + 1).
#pragma once
#include <cstdint>
#include <string>

namespace attn {

enum class LrScheduleKind { Constant, RsqrtWarmup };
LrScheduleKind lr_schedule_from_name(const std::string& name);  // "constant", "rsqrt_warmup"
const char* lr_schedule_name(LrScheduleKind kind);

struct LrSchedule {
  LrScheduleKind kind = LrScheduleKind::Constant;
  double learning_rate = 0;  // constant: the rate itself
  int64_t warmup_steps = 0;  // rsqrt_warmup only; > 0
  int64_t hidden = 0;        // rsqrt_warmup only: the model width D; > 0
  // The rate of 0-based step `step` (>= 0).
  double at(int64_t step) const;
};

}  // namespace attn
