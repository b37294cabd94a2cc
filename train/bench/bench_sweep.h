// The length sweep behind `attn bench` and `attn study`: every model x mode x
// length of the settings in order, each point run by run_bench_point, with
// the memory-budget rule (a model stops at the first length whose predicted
// or measured peak exceeds the limit) and progress on stderr.
#pragma once
#include <functional>
#include <vector>

#include "attn/train/bench/bench_options.h"
#include "attn/train/bench/bench_runner.h"

namespace attn {

// Called after every point with its result and every result so far (the
// caller prints a row and rewrites its files, so a long sweep stopped
// half-way leaves what it measured).
using SweepListener = std::function<void(const BenchResult& latest, const std::vector<BenchResult>& all)>;

// The point a sweep runs for one model, mode and length.
BenchPoint sweep_point(const BenchSettings& s, const std::string& model, BenchMode mode, int64_t length);

// run_bench_point, with a point that fails (out of memory, an engine error)
// returned as an "error" row naming why instead of thrown.
BenchResult run_bench_point_or_error(const BenchPoint& point);

// Runs the sweep; a point that fails (out of memory, an engine error) is an
// "error" row and ends that model and mode's lengths, as does "over_budget".
std::vector<BenchResult> run_length_sweep(const BenchSettings& s, const SweepListener& on_result);

}  // namespace attn
