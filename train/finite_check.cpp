#include "attn/train/finite_check.h"

#include <cmath>

#include "attn/engine/error.h"

namespace attn {

namespace {

template <class F>
void for_each_value(const Tensor& t, F&& f) {
  if (!is_floating(t.dtype())) return;
  if (t.device() == Device::CPU && t.is_contiguous()) {
    const int64_t n = t.numel();
    if (t.dtype() == DType::F32) {
      const float* p = t.data<float>();
      for (int64_t i = 0; i < n; ++i) f(static_cast<double>(p[i]));
    } else {
      const double* p = t.data<double>();
      for (int64_t i = 0; i < n; ++i) f(p[i]);
    }
    return;
  }
  for (double v : t.to_vector()) f(v);
}

}  // namespace

bool all_finite(const Tensor& t) {
  bool finite = true;
  for_each_value(t, [&](double v) { finite = finite && std::isfinite(v); });
  return finite;
}

std::pair<double, std::string> largest_magnitude(const std::vector<std::pair<std::string, Tensor>>& tensors) {
  std::pair<double, std::string> best{0.0, ""};
  for (const auto& [name, t] : tensors)
    for_each_value(t, [&](double v) {
      if (std::fabs(v) > best.first) best = {std::fabs(v), name};  // NaN compares false: skipped
    });
  return best;
}

}  // namespace attn
