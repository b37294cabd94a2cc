#include "attn/train/bench/study_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>

#include "attn/train/bench/bench_report.h"
#include "attn/util/svg_chart.h"

namespace attn {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double mib(int64_t bytes) { return static_cast<double>(bytes) / (1 << 20); }

std::string number(double v, int digits) {
  if (!std::isfinite(v)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// Digits that keep three significant figures for the sizes these tables hold.
int digits_for(double v) { return !std::isfinite(v) || std::fabs(v) >= 100 ? 0 : std::fabs(v) >= 10 ? 1 : 2; }

std::string padded(const std::string& s, size_t width, bool left = false) {
  if (s.size() >= width) return s;
  return left ? s + std::string(width - s.size(), ' ') : std::string(width - s.size(), ' ') + s;
}

size_t reference_index(const EfficiencyStudy& study) {
  for (size_t i = 0; i < study.encoders.size(); ++i)
    if (study.encoders[i].label == study.reference) return i;
  return study.encoders.size();
}

}  // namespace

double fit_power_exponent(const std::vector<std::pair<double, double>>& points) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  int count = 0;
  for (const auto& [n, y] : points) {
    if (!(n > 0) || !(y > 0)) continue;
    const double x = std::log(n), ly = std::log(y);
    sx += x, sy += ly, sxx += x * x, sxy += x * ly;
    ++count;
  }
  if (count < 2) return kNaN;
  const double spread = sxx - sx * sx / count;
  if (!(spread > 0)) return kNaN;
  return (sxy - sx * sy / count) / spread;
}

double study_value(const StudyColumn& column, const BenchResult& result) {
  if (result.status != "ok") return kNaN;
  if (column.memory) return mib(result.peak_bytes);
  return result.time.median_ms * column.steps;  // ms per step x thousands of steps = seconds
}

std::string table_study_text(const TableStudyResults& t) {
  const EfficiencyStudy& s = *t.study;
  const size_t ref = reference_index(s);
  std::string out = s.name + ": " + s.what + "\nsource: " + s.source + "\nshapes: " + s.shapes + "\n";
  for (const StudyColumn& c : s.columns) out += "  " + c.name + ": " + c.how + "\n";
  out += "ratios: each figure divided by " + s.reference + "'s in the same column (ours to ours, the paper's to "
         "the paper's)\n\n";
  size_t label_width = 6;
  for (const StudyEncoder& e : s.encoders) label_width = std::max(label_width, e.label.size());
  std::string header = padded("model", label_width, true);
  for (const StudyColumn& c : s.columns)
    header += " | " + padded(c.name, 16) + padded("paper", 8) + padded("ratio", 8) + padded("paper's", 9);
  out += header + "\n" + std::string(header.size(), '-') + "\n";
  for (size_t e = 0; e < s.encoders.size(); ++e) {
    std::string line = padded(s.encoders[e].label, label_width, true);
    for (size_t c = 0; c < s.columns.size(); ++c) {
      const double ours = study_value(s.columns[c], t.results[e][c]);
      const double paper = s.encoders[e].paper.empty() ? kNaN : s.encoders[e].paper[c];
      double ours_ratio = kNaN, paper_ratio = kNaN;
      if (ref < s.encoders.size()) {
        ours_ratio = ours / study_value(s.columns[c], t.results[ref][c]);
        paper_ratio = paper / s.encoders[ref].paper[c];
      }
      line += " | " + padded(number(ours, digits_for(ours)), 16) + padded(number(paper, digits_for(paper)), 8) +
              padded(number(ours_ratio, 2), 8) + padded(number(paper_ratio, 2), 9);
    }
    out += line + "\n";
  }
  return out;
}

std::string table_study_csv(const TableStudyResults& t) {
  const EfficiencyStudy& s = *t.study;
  const size_t ref = reference_index(s);
  std::string out = "study,label,model,hidden,config,column,mode,batch,length,random_lengths,status,median_ms,"
                    "peak_mib,value,paper,ratio,paper_ratio\n";
  for (size_t e = 0; e < s.encoders.size(); ++e) {
    const StudyEncoder& enc = s.encoders[e];
    std::string config;
    for (const auto& [key, value] : enc.config) config += (config.empty() ? "" : ";") + key + "=" + value;
    for (size_t c = 0; c < s.columns.size(); ++c) {
      const StudyColumn& col = s.columns[c];
      const BenchResult& r = t.results[e][c];
      const double ours = study_value(col, r);
      const double paper = enc.paper.empty() ? kNaN : enc.paper[c];
      const double ratio = ref < s.encoders.size() ? ours / study_value(col, t.results[ref][c]) : kNaN;
      const double paper_ratio = ref < s.encoders.size() ? paper / s.encoders[ref].paper[c] : kNaN;
      auto field = [](double v, int d) { return std::isfinite(v) ? number(v, d) : std::string(); };
      out += s.name + ",\"" + enc.label + "\"," + enc.model + "," + std::to_string(enc.hidden) + "," + config + ",\"" +
             col.name + "\"," + bench_mode_name(col.mode) + "," + std::to_string(col.batch) + "," +
             std::to_string(col.length) + "," + (col.random_lengths ? "1" : "0") + "," + r.status + "," +
             (r.status == "ok" ? number(r.time.median_ms, 3) : "") + "," +
             (r.status == "ok" ? number(mib(r.peak_bytes), 1) : "") + "," + field(ours, 3) + "," + field(paper, 1) +
             "," + field(ratio, 3) + "," + field(paper_ratio, 3) + "\n";
    }
  }
  return out;
}

std::string sweep_study_text(const EfficiencyStudy& study, const std::vector<BenchResult>& results) {
  std::map<std::string, std::vector<std::pair<double, double>>> times, peaks;
  std::vector<std::string> order;
  for (const BenchResult& r : results) {
    if (r.status != "ok") continue;
    const std::string key = r.point.model + " " + bench_mode_name(r.point.mode);
    if (!times.count(key)) order.push_back(key);
    times[key].emplace_back(static_cast<double>(r.point.length), r.time.median_ms);
    peaks[key].emplace_back(static_cast<double>(r.point.length), mib(r.peak_bytes));
  }
  std::string out = study.name + ": " + study.what + "\nsource: " + study.source + "\nshapes: " + study.shapes +
                    "\n\nGrowth with length n: the exponent k of c n^k fitted on the sweep (all lengths; the longer "
                    "half, where per-batch constants weigh least). Linear is 1, quadratic 2.\n";
  char line[256];
  std::snprintf(line, sizeof line, "%-18s %8s %12s %10s %12s %12s %10s %10s\n", "model", "lengths", "time k (all)",
                "(longer)", "memory k", "(longer)", "at n", "ms, MiB");
  out += line;
  auto longer_half = [](const std::vector<std::pair<double, double>>& p) {
    return std::vector<std::pair<double, double>>(p.begin() + static_cast<long>(p.size() / 2), p.end());
  };
  for (const std::string& key : order) {
    const auto& t = times[key];
    const auto& m = peaks[key];
    char tail[64];
    std::snprintf(tail, sizeof tail, "%.1f, %.1f", t.back().second, m.back().second);
    std::snprintf(line, sizeof line, "%-18s %8zu %12s %10s %12s %12s %10.0f %s\n", key.c_str(), t.size(),
                  number(fit_power_exponent(t), 2).c_str(), number(fit_power_exponent(longer_half(t)), 2).c_str(),
                  number(fit_power_exponent(m), 2).c_str(), number(fit_power_exponent(longer_half(m)), 2).c_str(),
                  t.back().first, tail);
    out += line;
  }
  return out;
}

std::string sweep_study_svg(const EfficiencyStudy& study, const std::vector<BenchResult>& results,
                            const std::string& device) {
  const bool both_modes = [&] {
    bool infer = false, train = false;
    for (const BenchResult& r : results) (r.point.mode == BenchMode::Infer ? infer : train) = true;
    return infer && train;
  }();
  ChartPanel time{"(a) time per step", "sequence length", "median time (ms)", {}, false};
  ChartPanel memory{"(b) memory", "sequence length", "allocator peak (MiB)", {}, false};
  std::map<std::string, size_t> index;
  for (const BenchResult& r : results) {
    if (r.status != "ok") continue;
    const std::string name = r.point.model + (both_modes ? std::string(" ") + bench_mode_name(r.point.mode) : "");
    auto it = index.find(name);
    if (it == index.end()) {
      bool baseline = false;
      int color = 0;
      for (size_t i = 0; i < study.encoders.size(); ++i)
        if (study.encoders[i].model == r.point.model) baseline = study.encoders[i].baseline, color = static_cast<int>(i);
      it = index.emplace(name, time.series.size()).first;
      ChartSeries s{name, {}, color, baseline};
      time.series.push_back(s);
      memory.series.push_back(s);
    }
    const double n = static_cast<double>(r.point.length);
    time.series[it->second].points.emplace_back(n, r.time.median_ms);
    memory.series[it->second].points.emplace_back(n, mib(r.peak_bytes));
  }
  const BenchPoint shape = results.empty() ? BenchPoint() : results.front().point;
  // Short enough for one line at the chart's title size; the legend's
  // dashed lines are the baselines.
  const std::string title = study.figure + " here: " + device + ", batch " + std::to_string(shape.batch) + ", " +
                            std::to_string(shape.features) + " features, " +
                            (both_modes ? "inference and training" : "inference");
  return render_svg_chart(title, {time, memory});
}

}  // namespace attn
