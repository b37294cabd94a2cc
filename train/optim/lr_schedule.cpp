#include "attn/train/optim/lr_schedule.h"

#include <algorithm>
#include <cmath>

#include "attn/engine/error.h"

namespace attn {

LrScheduleKind lr_schedule_from_name(const std::string& name) {
  if (name == "constant") return LrScheduleKind::Constant;
  if (name == "rsqrt_warmup") return LrScheduleKind::RsqrtWarmup;
  ATTN_CHECK(false, "lr_schedule", "unknown schedule '", name, "' (expected constant or rsqrt_warmup)");
  return LrScheduleKind::Constant;
}

const char* lr_schedule_name(LrScheduleKind kind) {
  return kind == LrScheduleKind::RsqrtWarmup ? "rsqrt_warmup" : "constant";
}

double LrSchedule::at(int64_t step) const {
  ATTN_CHECK(step >= 0, "lr_schedule", "step must be >= 0, got ", step);
  ATTN_CHECK(std::isfinite(learning_rate) && learning_rate > 0, "lr_schedule", "learning_rate must be positive, got ",
             learning_rate);
  if (kind == LrScheduleKind::Constant) return learning_rate;
  ATTN_CHECK(warmup_steps > 0 && hidden > 0, "lr_schedule", "rsqrt_warmup needs warmup_steps > 0 and hidden > 0, got ",
             warmup_steps, " and ", hidden);
  const double s = static_cast<double>(step + 1), w = static_cast<double>(warmup_steps);
  return learning_rate * 5000.0 * 0.002 / std::sqrt(static_cast<double>(hidden)) *
         std::min(s * std::pow(w, -1.5), 1.0 / std::sqrt(s));
}

}  // namespace attn
