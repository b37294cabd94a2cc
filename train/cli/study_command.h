// `attn study NAME`: one of the papers' efficiency studies run on this
// machine (train/bench/efficiency_studies.h), writing its CSV, its report and,
// for a length sweep, a picture drawn like the paper's figure.
#pragma once
#include <string>
#include <vector>

namespace attn {

// Returns the process exit code; bad flags throw UsageError, failures Error.
int run_study_command(const std::vector<std::string>& args);

}  // namespace attn
