// `attn bench-matmul`: the engine's matmul against a direct OpenBLAS GEMM on
// the same inputs, to show what the op's dispatch and allocation cost.
#pragma once
#include <string>
#include <vector>

namespace attn {

// Returns the process exit code; a bad flag throws UsageError.
int run_bench_matmul(const std::vector<std::string>& args);

}  // namespace attn
