// Small helpers shared by the test files.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "attn/engine/error.h"
#include "attn/nn/module.h"

namespace attn {
namespace testing_support {

// The message of the attn::Error that f throws, or "(no error)".
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

// A module's parameters by name.
inline std::map<std::string, Tensor> params_of(const Module& m) {
  std::map<std::string, Tensor> out;
  for (const auto& [name, p] : m.named_parameters()) out[name] = p;
  return out;
}

// The largest |a - b| over two tensors of one size (a size mismatch fails
// the calling test).
inline double max_abs_diff(const Tensor& a, const Tensor& b) {
  const std::vector<double> x = a.to_vector(), y = b.to_vector();
  EXPECT_EQ(x.size(), y.size());
  double m = 0;
  for (size_t i = 0; i < x.size() && i < y.size(); ++i) m = std::max(m, std::fabs(x[i] - y[i]));
  return m;
}

// The largest |t|.
inline double max_abs(const Tensor& t) {
  double m = 0;
  for (double v : t.to_vector()) m = std::max(m, std::fabs(v));
  return m;
}

}  // namespace testing_support
}  // namespace attn
