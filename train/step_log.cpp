#include "attn/train/step_log.h"

#include <cerrno>
#include <cstring>
#include <limits>
#include <utility>

#include "attn/engine/allocator.h"
#include "attn/engine/error.h"
#include "attn/train/evaluate.h"

namespace attn {

namespace {

// Counted in place: the count runs at every step, and a copy to doubles
// (to_vector) would cost as much as a small model's step.
int64_t valid_positions(const Tensor& mask) {
  if (!mask.defined()) return 0;
  ATTN_CHECK(mask.device() == Device::CPU && mask.dtype() == DType::U8 && mask.is_contiguous(), "step log",
             "a batch's mask must be a contiguous uint8 tensor on the CPU to count its tokens");
  const uint8_t* valid = mask.data<uint8_t>();
  int64_t count = 0;
  for (int64_t i = 0, n = mask.numel(); i < n; ++i) count += valid[i] != 0;
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

StepLog::~StepLog() {
  if (file_) std::fclose(file_);
}

void StepLog::write(const std::string& line) {
  if (!file_) {
    file_ = std::fopen(path_.c_str(), "a");
    ATTN_CHECK(file_ != nullptr, "train", "cannot open the step log '", path_, "': ", std::strerror(errno));
  }
  const bool written = std::fputs(line.c_str(), file_) >= 0 && std::fputc('\n', file_) != EOF;
  ATTN_CHECK(written && std::fflush(file_) == 0, "train", "cannot write the step log '", path_, "': ",
             std::strerror(errno));
}

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
  write(step_line_json(line));
  seconds_ = 0;
  examples_ = tokens_ = 0;
}

}  // namespace attn
