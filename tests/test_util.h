// Small helpers shared by the test files.
#pragma once
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "attn/engine/error.h"
#include "attn/nn/module.h"

namespace attn {
namespace testing_support {

// The message of the exception of type E that f throws (attn::Error unless
// named: UsageError, AnomalyError), or "(no error)"; any other exception
// propagates and fails the test.
template <typename E = Error>
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "(no error)";
}

// The running test's own folder, TempDir()/attn_tests/<suite>.<test>.<pid>,
// emptied the first time the test asks for it. Emptying matters: process ids
// come round again (CTest starts one process per test), and a file left by an
// earlier run under the same id once made a "does not exist" check fail.
inline std::string scratch_dir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string test = info ? std::string(info->test_suite_name()) + "." + info->name() : "outside_a_test";
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / "attn_tests" / (test + "." + std::to_string(::getpid()));
  static std::string emptied_for;  // the test whose folder is fresh already
  if (emptied_for != test) {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    emptied_for = test;
  }
  return dir.string();
}

// A file name in the running test's folder.
inline std::string scratch_path(const std::string& name) {
  return (std::filesystem::path(scratch_dir()) / name).string();
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
