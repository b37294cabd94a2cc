#include "attn/engine/kernel_trace.h"

#include <cstdio>

#include "attn/engine/autograd.h"
#include "attn/engine/tensor.h"

namespace attn {

namespace {

// "float32[2, 3]" for each tensor argument, "-" for an undefined one.
std::string describe_arguments(KernelTensors args) {
  std::string text;
  for (size_t i = 0; i < args.size; ++i) {
    const Tensor* t = args.items[i];
    if (t == nullptr) continue;  // an op code or a scalar
    if (!text.empty()) text += ' ';
    text += t->defined() ? dtype_name(t->dtype()) + shape_str(t->shape()) : "-";
  }
  return text;
}

}  // namespace

KernelTrace::KernelTrace(std::ostream& out) : out_(out), previous_(set_kernel_observer(this)) {}
KernelTrace::~KernelTrace() { set_kernel_observer(previous_); }

void KernelTrace::before(const char* op, Device device) {
  // A kernel called through KernelCallScope alone has no arguments to show.
  calls_.push_back({"", current_backward_op(), std::chrono::steady_clock::now()});
  if (previous_) previous_->before(op, device);
}

void KernelTrace::inspect_before(const char* op, Device device, KernelTensors args) {
  if (!calls_.empty()) calls_.back().arguments = describe_arguments(args);
  if (previous_) previous_->inspect_before(op, device, args);
  if (!calls_.empty()) calls_.back().start = std::chrono::steady_clock::now();  // not the describing
}

void KernelTrace::inspect_after(const char* op, Device device, KernelTensors args) {
  if (previous_) previous_->inspect_after(op, device, args);
}

void KernelTrace::after(const char* op, Device device) {
  if (previous_) previous_->after(op, device);
  if (calls_.empty()) return;
  const Call call = calls_.back();
  calls_.pop_back();
  const double micros =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - call.start).count();
  char time[32];
  std::snprintf(time, sizeof time, "%.1f us", micros);
  out_ << std::string(2 * calls_.size(), ' ') << op << "  " << device_name(device) << "  "
       << (call.arguments.empty() ? "(no tensor arguments)" : call.arguments) << "  " << time;
  if (call.backward_of != nullptr) out_ << "  (backward of " << call.backward_of << ")";
  out_ << '\n';
  ++traced_;
}

}  // namespace attn
