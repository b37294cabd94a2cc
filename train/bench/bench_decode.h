// `attn bench-decode`: greedy decoding time per sentence of the translation
// model (models/seq2seq_search.h) against the output length, with each
// decoder layer's keys and values cached (a step costs O(t)) and without
// (every step reruns the decoder over the whole prefix, O(t^2) per step
// summed to O(n^3) attention and O(n^2) projections per sentence).
#pragma once
#include <string>
#include <vector>

namespace attn {

// Returns the process exit code; a bad flag throws UsageError.
int run_bench_decode(const std::vector<std::string>& args);

}  // namespace attn
