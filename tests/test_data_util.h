// Fixture files for the data tests: each test writes what it reads into its
// own folder under ::testing::TempDir(), so no test needs the network.
#pragma once
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "engine/error.h"
#include "test_util.h"

namespace attn {
namespace test_data {

// A fresh, empty folder named after the running test.
inline std::string fresh_dir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "attn_data_tests" /
                              (std::string(info->test_suite_name()) + "." + info->name());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

inline std::string write(const std::string& dir, const std::string& name, const std::string& text) {
  std::filesystem::path p = std::filesystem::path(dir) / name;
  std::filesystem::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary);
  out << text;
  return p.string();
}

// The message of the attn::Error a callable throws (shared with the other suites).
using testing_support::error_of;

}  // namespace test_data
}  // namespace attn
