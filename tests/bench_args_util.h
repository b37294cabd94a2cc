// The UsageError message `attn bench` gives for these arguments, or
// "(no usage error)": shared by the bench argument tests.
#pragma once
#include <string>
#include <vector>

#include "attn/util/cli_args.h"
#include "attn/train/bench/bench_options.h"

namespace attn {
namespace testing_support {

inline std::string bench_usage_error(const std::vector<std::string>& args) {
  BenchSettings s;
  std::string help;
  try {
    parse_bench_args(args, &s, &help);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no usage error)";
}

}  // namespace testing_support
}  // namespace attn
