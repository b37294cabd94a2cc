// Runs an `attn` command's entry point in-process, as the CLI would, with
// text on stdin, and captures what it prints: the eval and predict tests.
#pragma once
#include <gtest/gtest.h>

#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace attn {
namespace testing_support {

// Runs a command with `input` on stdin and returns what it printed.
inline std::string run_command(int (*command)(const std::vector<std::string>&), const std::vector<std::string>& args,
                               const std::string& input, int* code) {
  std::istringstream in(input);
  std::streambuf* old = std::cin.rdbuf(in.rdbuf());
  ::testing::internal::CaptureStdout();
  try {
    *code = command(args);
  } catch (...) {
    std::fflush(stdout);
    ::testing::internal::GetCapturedStdout();
    std::cin.rdbuf(old);
    throw;
  }
  std::fflush(stdout);
  std::string out = ::testing::internal::GetCapturedStdout();
  std::cin.rdbuf(old);
  return out;
}

}  // namespace testing_support
using testing_support::run_command;
}  // namespace attn
