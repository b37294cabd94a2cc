#include "attn/engine/anomaly.h"

#include <cmath>
#include <sstream>

#include "attn/engine/autograd.h"
#include "attn/engine/tensor.h"

namespace attn {

namespace {

// The values of a floating tensor as doubles, in row-major order.
std::vector<double> host_values(const Tensor& t) {
  if (t.device() == Device::CPU && t.is_contiguous()) {
    const int64_t n = t.numel();
    if (t.dtype() == DType::F32) {
      const float* p = t.data<float>();
      return std::vector<double>(p, p + n);
    }
    const double* p = t.data<double>();
    return std::vector<double>(p, p + n);
  }
  return t.to_vector();
}

bool checked_tensor(const Tensor* t) { return t != nullptr && t->defined() && is_floating(t->dtype()); }

bool any_nonfinite(const std::vector<double>& v) {
  for (double x : v)
    if (!std::isfinite(x)) return true;
  return false;
}

std::string describe(const Tensor& t) { return shape_str(t.shape()) + " " + dtype_name(t.dtype()); }

}  // namespace

AnomalyDetector::AnomalyDetector() : previous_(set_kernel_observer(this)) {}
AnomalyDetector::~AnomalyDetector() { set_kernel_observer(previous_); }

void AnomalyDetector::before(const char* op, Device device) {
  if (previous_) previous_->before(op, device);
}
void AnomalyDetector::after(const char* op, Device device) {
  if (previous_) previous_->after(op, device);
}

void AnomalyDetector::inspect_before(const char*, Device, KernelTensors args) {
  if (depth_ > 0) return;  // a copy made by the detector itself
  ++depth_;
  before_values_.assign(args.size, {});
  had_nonfinite_.assign(args.size, false);
  for (size_t i = 0; i < args.size; ++i) {
    if (!checked_tensor(args.items[i])) continue;
    std::vector<double> v = host_values(*args.items[i]);
    if (any_nonfinite(v)) {
      had_nonfinite_[i] = true;
      before_values_[i] = std::move(v);
    }
  }
  --depth_;
}

void AnomalyDetector::inspect_after(const char* op, Device, KernelTensors args) {
  if (depth_ > 0) return;
  ++depth_;
  ++checked_;
  bool any_input_nonfinite = false;
  for (bool b : had_nonfinite_) any_input_nonfinite = any_input_nonfinite || b;
  for (size_t i = 0; i < args.size; ++i) {
    if (!checked_tensor(args.items[i])) continue;
    const std::vector<double> v = host_values(*args.items[i]);
    const bool snapshot = i < had_nonfinite_.size() && had_nonfinite_[i];
    int64_t first_nan = -1, first_inf = -1;
    for (size_t j = 0; j < v.size(); ++j) {
      if (std::isfinite(v[j])) continue;
      const bool unchanged = snapshot && j < before_values_[i].size() &&
                             (before_values_[i][j] == v[j] || (std::isnan(v[j]) && std::isnan(before_values_[i][j])));
      if (unchanged) continue;
      if (std::isnan(v[j]) && first_nan < 0) first_nan = static_cast<int64_t>(j);
      if (std::isinf(v[j]) && first_inf < 0) first_inf = static_cast<int64_t>(j);
    }
    // An infinity passed on from a non-finite argument, or placed by a fill
    // (full(-inf) for masking), is deliberate; one made from finite values is
    // an overflow.
    const bool overflow = first_inf >= 0 && !any_input_nonfinite && std::string(op) != "fill";
    if (first_nan < 0 && !overflow) continue;
    const int64_t at = first_nan >= 0 ? first_nan : first_inf;
    std::ostringstream msg;
    msg << "detect-anomaly: kernel '" << op << "'";
    if (const char* backward_of = current_backward_op()) msg << " in the backward of '" << backward_of << "'";
    else msg << " (forward)";
    const double bad = v[static_cast<size_t>(at)];
    msg << " wrote " << (std::isnan(bad) ? "nan" : bad > 0 ? "inf" : "-inf") << " at flat index " << at
        << " of its tensor argument #" << i << " (" << describe(*args.items[i]) << "); its tensor arguments:";
    for (size_t k = 0; k < args.size; ++k) {
      if (!args.items[k] || !args.items[k]->defined()) continue;
      msg << " #" << k << " " << describe(*args.items[k]);
      if (k < had_nonfinite_.size() && had_nonfinite_[k]) msg << " (non-finite before the call)";
      msg << ";";
    }
    --depth_;
    throw AnomalyError(msg.str());
  }
  --depth_;
}

}  // namespace attn
