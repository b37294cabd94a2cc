// `attn bench`: the papers' efficiency study (time and memory of every
// encoder against sequence length, inference and training), and with
// --profile the time and bytes of one training step by kernel op.
#pragma once
#include <string>
#include <vector>

namespace attn {

// Returns the process exit code; bad flags throw UsageError, failures Error.
int run_bench_command(const std::vector<std::string>& args);

}  // namespace attn
