// `attn study`: the papers' efficiency studies as data (every encoder
// registered, one paper figure per column), the report's arithmetic (power-law
// exponents, unit scaling, ratios to the reference) on made-up results, bad
// flags, and a tiny sweep that writes its CSV, report and picture. No timing
// assertions.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "attn/models/encoder.h"
#include "attn/train/bench/efficiency_studies.h"
#include "attn/train/bench/study_report.h"
#include "attn/train/cli/study_command.h"
#include "attn/util/cli_args.h"
#include "test_util.h"

namespace attn {
namespace {

using ::testing::HasSubstr;
using testing_support::error_of;
using testing_support::scratch_dir;
using testing_support::scratch_path;

TEST(EfficiencyStudies, EveryEncoderIsRegisteredAndEveryRowHasTheColumnsFigures) {
  ASSERT_FALSE(efficiency_studies().empty());
  for (const EfficiencyStudy& s : efficiency_studies()) {
    bool reference_found = false;
    for (const StudyEncoder& e : s.encoders) {
      EXPECT_NE(find_encoder(e.model), nullptr) << s.name << ": " << e.model;
      if (!s.sweep) {
        EXPECT_EQ(e.paper.size(), s.columns.size()) << s.name << ": " << e.label;
      }
      reference_found |= e.label == s.reference;
    }
    EXPECT_TRUE(reference_found) << s.name << " has no encoder labelled " << s.reference;
    if (!s.sweep) {
      for (const StudyEncoder& e : s.encoders) {
        if (e.label != s.reference) continue;
        for (double v : e.paper) EXPECT_GT(v, 0) << s.name << ": the reference needs every figure";
      }
    }
  }
}

TEST(EfficiencyStudies, UnknownNameIsAUsageErrorNamingTheKnownOnes) {
  const std::string message = error_of<UsageError>([] { find_efficiency_study("biblosan-fig7"); });
  EXPECT_THAT(message, HasSubstr("did you mean 'biblosan-fig6'"));
  EXPECT_THAT(message, HasSubstr("mtsa-table1"));
}

TEST(StudyReport, PowerLawExponentIsRecoveredAndNonPositivePointsAreLeftOut) {
  std::vector<std::pair<double, double>> points;
  for (double n : {16.0, 32.0, 64.0, 128.0, 384.0}) points.emplace_back(n, 3.0 * std::pow(n, 1.5));
  // log of exact powers: the fit is exact up to a few roundings of log().
  EXPECT_NEAR(fit_power_exponent(points), 1.5, 1e-12);
  points.emplace_back(512.0, 0.0);  // a point that did not run
  EXPECT_NEAR(fit_power_exponent(points), 1.5, 1e-12);
  EXPECT_TRUE(std::isnan(fit_power_exponent({{16.0, 4.0}})));
  EXPECT_TRUE(std::isnan(fit_power_exponent({{16.0, 4.0}, {16.0, 5.0}})));  // one length: no slope
}

BenchResult made_up(double median_ms, int64_t peak_mib, const std::string& status = "ok") {
  BenchResult r;
  r.status = status;
  r.time.median_ms = median_ms;
  r.peak_bytes = peak_mib << 20;
  return r;
}

TEST(StudyReport, ValuesAreInThePapersUnits) {
  StudyColumn time;
  time.steps = 8.597;  // 8597 steps: ms x thousands = s
  EXPECT_NEAR(study_value(time, made_up(100, 1)), 859.7, 1e-9);
  StudyColumn memory;
  memory.memory = true;
  EXPECT_DOUBLE_EQ(study_value(memory, made_up(100, 300)), 300.0);
  EXPECT_TRUE(std::isnan(study_value(time, made_up(100, 1, "error"))));
}

TEST(StudyReport, RatiosAreTakenAgainstTheReferenceOnEachSide) {
  EfficiencyStudy s;
  s.name = "made-up";
  s.reference = "Ref";
  StudyColumn c;
  c.name = "time (s)";
  c.steps = 0.001;  // one step's ms as seconds
  s.columns = {c};
  s.encoders = {StudyEncoder{"Slow", "bilstm", 0, {}, {300}, true}, StudyEncoder{"Ref", "mtsa", 0, {}, {100}, false}};
  TableStudyResults t;
  t.study = &s;
  t.results = {{made_up(5000, 1)}, {made_up(1000, 1)}};  // 5 s and 1 s
  const std::string text = table_study_text(t);
  EXPECT_THAT(text, HasSubstr("5.00"));  // ours: 5 / 1
  EXPECT_THAT(text, HasSubstr("3.00"));  // the paper's: 300 / 100
  const std::string csv = table_study_csv(t);
  EXPECT_THAT(csv, HasSubstr("made-up,\"Slow\",bilstm,0,,\"time (s)\",train,64,64,0,ok,5000.000,1.0,5.000,300.0,5.000,3.000"));
}

TEST(StudyCommand, BadFlagsAreUsageErrors) {
  EXPECT_THAT(error_of<UsageError>([] { run_study_command({"mtsa-table1", "--lengths", "8"}); }),
              HasSubstr("is a table at the paper's shapes"));
  EXPECT_THAT(error_of<UsageError>([] { run_study_command({"mtsa-table1", "--models", "lstm"}); }),
              HasSubstr("has no encoder 'lstm' (did you mean 'bilstm'?)"));
  EXPECT_THAT(error_of<UsageError>([] { run_study_command({"mtsa-table1", "biblosan-fig6"}); }),
              HasSubstr("one study at a time"));
  EXPECT_THAT(error_of<UsageError>([] { run_study_command({"biblosan-fig6", "--mode", "sideways"}); }),
              HasSubstr("attn study: --mode must be infer, train or both"));
  const std::string file = scratch_path("a_file");
  std::ofstream(file) << "x";
  EXPECT_THAT(error_of<UsageError>([&] { run_study_command({"biblosan-fig6", "--out", file}); }),
              HasSubstr("is not a folder"));
}

int count_of(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

std::string read_all(const std::string& path) {
  std::stringstream s;
  s << std::ifstream(path).rdbuf();
  return s.str();
}

TEST(StudyCommand, TinySweepWritesCsvReportAndPicture) {
  const std::string dir = scratch_dir();
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  const int rc = run_study_command(
      {"biblosan-fig6", "--models", "mtsa,bilstm", "--lengths", "2,4", "--reps", "1", "--warmup", "0", "--out", dir});
  const std::string out = ::testing::internal::GetCapturedStdout();
  ::testing::internal::GetCapturedStderr();
  ASSERT_EQ(rc, 0) << out;
  const std::string csv = read_all(dir + "/biblosan-fig6.csv");
  EXPECT_THAT(csv, HasSubstr("mtsa,infer,cpu,64,2,300,1,ok,"));
  EXPECT_THAT(csv, HasSubstr("bilstm,infer,cpu,64,4,300,1,ok,"));
  const std::string svg = read_all(dir + "/biblosan-fig6.svg");
  EXPECT_EQ(count_of(svg, "<polyline"), 4);  // 2 encoders x 2 panels
  EXPECT_THAT(svg, HasSubstr("stroke-dasharray"));  // the baseline is dashed
  const std::string report = read_all(dir + "/biblosan-fig6.txt");
  EXPECT_THAT(report, HasSubstr("bilstm infer"));
  EXPECT_THAT(out, HasSubstr("wrote " + dir + "/biblosan-fig6.svg"));
}

}  // namespace
}  // namespace attn
