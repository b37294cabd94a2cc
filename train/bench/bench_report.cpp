#include "attn/train/bench/bench_report.h"

#include <cstdio>
#include <map>

#include "attn/util/svg_chart.h"

namespace attn {

namespace {

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

double mib(int64_t bytes) { return static_cast<double>(bytes) / (1 << 20); }

// CSV field: quoted when it holds a comma, a quote or a newline.
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

const std::vector<std::string>& bench_csv_columns() {
  static const std::vector<std::string> columns = {
      "model",  "mode",   "device", "batch",  "length", "features",   "reps",    "status", "median_ms",
      "q1_ms",  "q3_ms",  "min_ms", "max_ms", "peak_bytes", "peak_mib", "rss_mib", "cache_mib", "faults_per_step",
      "params", "threads", "note"};
  return columns;
}

std::string bench_csv(const std::vector<BenchResult>& results) {
  std::string out;
  for (size_t i = 0; i < bench_csv_columns().size(); ++i) out += (i ? "," : "") + bench_csv_columns()[i];
  out += "\n";
  for (const BenchResult& r : results) {
    const BenchPoint& p = r.point;
    const bool timed = r.status == "ok" || (r.status == "over_budget" && r.time.median_ms > 0);
    auto t = [&](double v) { return timed ? fixed(v, 3) : std::string(); };
    std::vector<std::string> f = {p.model,
                                  bench_mode_name(p.mode),
                                  device_name(p.device),
                                  std::to_string(p.batch),
                                  std::to_string(p.length),
                                  std::to_string(p.features),
                                  std::to_string(p.reps),
                                  r.status,
                                  t(r.time.median_ms),
                                  t(r.time.q1_ms),
                                  t(r.time.q3_ms),
                                  t(r.time.min_ms),
                                  t(r.time.max_ms),
                                  std::to_string(r.peak_bytes),
                                  fixed(mib(r.peak_bytes), 1),
                                  r.rss_bytes ? fixed(mib(r.rss_bytes), 1) : std::string(),
                                  r.status == "ok" ? fixed(mib(r.cached_bytes), 1) : std::string(),
                                  r.status == "ok" ? fixed(r.faults_per_step, 1) : std::string(),
                                  r.parameters ? std::to_string(r.parameters) : std::string(),
                                  r.threads ? std::to_string(r.threads) : std::string(),
                                  csv_field(r.note)};
    for (size_t i = 0; i < f.size(); ++i) out += (i ? "," : "") + f[i];
    out += "\n";
  }
  return out;
}

std::string bench_table_header() {
  char line[256];
  std::snprintf(line, sizeof line, "%-12s %-5s %6s %11s %23s %11s %11s %10s %10s %12s\n", "model", "mode", "length",
                "median ms", "IQR ms", "min ms", "peak MiB", "RSS MiB", "cache MiB", "faults/step");
  return line;
}

std::string bench_table_row(const BenchResult& r) {
  char line[512];
  const BenchPoint& p = r.point;
  if (r.status == "ok") {
    const std::string iqr = fixed(r.time.q1_ms, 1) + " - " + fixed(r.time.q3_ms, 1);
    std::snprintf(line, sizeof line, "%-12s %-5s %6lld %11.1f %23s %11.1f %11.1f %10.1f %10.1f %12.1f\n",
                  p.model.c_str(), bench_mode_name(p.mode), static_cast<long long>(p.length), r.time.median_ms,
                  iqr.c_str(), r.time.min_ms, mib(r.peak_bytes), mib(r.rss_bytes), mib(r.cached_bytes),
                  r.faults_per_step);
  } else if (r.status == "over_budget") {
    std::snprintf(line, sizeof line, "%-12s %-5s %6lld   out of memory budget: %s; longer lengths skipped\n",
                  p.model.c_str(), bench_mode_name(p.mode), static_cast<long long>(p.length), r.note.c_str());
  } else {
    std::snprintf(line, sizeof line, "%-12s %-5s %6lld   %s: %s; longer lengths skipped\n", p.model.c_str(),
                  bench_mode_name(p.mode), static_cast<long long>(p.length), r.status.c_str(), r.note.c_str());
  }
  return line;
}

std::string bench_svg(const std::vector<BenchResult>& results, const std::string& title) {
  ChartPanel time{"Time per step", "sequence length", "median wall time (ms, log scale)", {}, true};
  ChartPanel memory{"Peak memory per step", "sequence length", "allocator peak (MiB, log scale)", {}, true};
  std::map<std::string, int> model_color;
  std::map<std::string, size_t> series_index;
  for (const BenchResult& r : results) {
    if (r.status != "ok") continue;
    const std::string name = r.point.model + " " + bench_mode_name(r.point.mode);
    if (!model_color.count(r.point.model)) model_color[r.point.model] = static_cast<int>(model_color.size());
    auto it = series_index.find(name);
    if (it == series_index.end()) {
      it = series_index.emplace(name, time.series.size()).first;
      ChartSeries s{name, {}, model_color[r.point.model], r.point.mode == BenchMode::Train};
      time.series.push_back(s);
      memory.series.push_back(s);
    }
    const double n = static_cast<double>(r.point.length);
    time.series[it->second].points.emplace_back(n, r.time.median_ms);
    memory.series[it->second].points.emplace_back(n, mib(r.peak_bytes));
  }
  return render_svg_chart(title, {time, memory});
}

}  // namespace attn
