// What `attn study` writes: for a table study, our figure per encoder and
// column in the paper's unit beside the paper's, and both as ratios to the
// study's reference encoder (GPU seconds and CPU seconds are not comparable;
// their ratios are); for a length sweep, the paper-like two-panel picture and
// the growth exponents fitted on it.
#pragma once
#include <string>
#include <vector>

#include "attn/train/bench/bench_runner.h"
#include "attn/train/bench/efficiency_studies.h"

namespace attn {

// The exponent k of y ~ c n^k fitted by least squares on (log n, log y);
// points with y <= 0 are left out. NaN with fewer than two usable points.
double fit_power_exponent(const std::vector<std::pair<double, double>>& points);

// A table study's measurements: results[e][c] for encoder e and column c.
struct TableStudyResults {
  const EfficiencyStudy* study = nullptr;
  std::vector<std::vector<BenchResult>> results;
};

// A column's figure in the paper's unit (seconds for an epoch or a dev pass,
// MiB for memory); NaN when the point did not run.
double study_value(const StudyColumn& column, const BenchResult& result);

std::string table_study_text(const TableStudyResults& t);
std::string table_study_csv(const TableStudyResults& t);

// For a sweep: per encoder, the exponents of time and memory against length
// over the whole sweep and over its longer half, and each encoder's time and
// memory against the reference at the longest length both reached.
std::string sweep_study_text(const EfficiencyStudy& study, const std::vector<BenchResult>& results);
// Two panels like the paper's figure: time and memory against length, linear
// axes, a line per encoder (the RNN and CNN baselines dashed).
std::string sweep_study_svg(const EfficiencyStudy& study, const std::vector<BenchResult>& results,
                            const std::string& device);

}  // namespace attn
