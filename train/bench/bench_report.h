// What `attn bench` prints and writes: the stdout table rows, the CSV and
// the two-panel SVG (time and memory against length, a line per encoder and mode).
#pragma once
#include <string>
#include <vector>

#include "attn/train/bench/bench_runner.h"

namespace attn {

// The CSV columns, in order.
const std::vector<std::string>& bench_csv_columns();
// Header line and one line per result.
std::string bench_csv(const std::vector<BenchResult>& results);

std::string bench_table_header();
std::string bench_table_row(const BenchResult& r);

// Time (ms, log scale) and peak allocator memory (MiB, log scale) against
// length; only "ok" rows are drawn.
std::string bench_svg(const std::vector<BenchResult>& results, const std::string& title);

}  // namespace attn
