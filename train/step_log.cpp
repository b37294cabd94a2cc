#include "attn/train/step_log.h"

#include <limits>
#include <utility>

#include "attn/engine/allocator.h"
#include "attn/train/evaluate.h"
#include "attn/util/atomic_file.h"

namespace attn {

namespace {

int64_t valid_positions(const Tensor& mask) {
  if (!mask.defined()) return 0;
  int64_t count = 0;
  for (double v : mask.to_vector()) count += v != 0;
  return count;
}

}  // namespace

std::string step_line_json(const StepLine& l) {
  auto integer = [](int64_t v) { return std::to_string(v); };
  return "{\"step\":" + integer(l.step) + ",\"epoch\":" + integer(l.epoch) +
         ",\"loss\":" + json_metric_value(l.loss) + ",\"mean_loss\":" + json_metric_value(l.mean_loss) +
         ",\"grad_norm\":" + json_metric_value(l.grad_norm) + ",\"clipped\":" + (l.clipped ? "true" : "false") +
         ",\"lr\":" + json_metric_value(l.lr) + ",\"examples_per_s\":" + json_metric_value(l.examples_per_s) +
         ",\"tokens_per_s\":" + json_metric_value(l.tokens_per_s) +
         ",\"allocator_bytes\":" + integer(l.allocator_bytes) + "}";
}

int64_t tokens_in(const Batch& batch) { return valid_positions(batch.mask) + valid_positions(batch.mask_b); }

StepLog::StepLog(std::string path, int64_t every, Device device)
    : path_(std::move(path)), every_(every), device_(device) {}

void StepLog::step_begins() {
  if (on()) began_ = std::chrono::steady_clock::now();
}

void StepLog::step_ends(StepLine line, int64_t examples, int64_t tokens) {
  if (!on()) return;
  seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - began_).count();
  examples_ += examples;
  tokens_ += tokens;
  if (line.step % every_ != 0) return;
  // A zero time (a clock coarser than the steps) gives no rate: null, not Inf.
  const double per_second = seconds_ > 0 ? 1.0 / seconds_ : std::numeric_limits<double>::quiet_NaN();
  line.examples_per_s = static_cast<double>(examples_) * per_second;
  line.tokens_per_s = static_cast<double>(tokens_) * per_second;
  line.allocator_bytes = allocator_for(device_).stats().current_bytes;
  append_line(path_, step_line_json(line));
  seconds_ = 0;
  examples_ = tokens_ = 0;
}

}  // namespace attn
