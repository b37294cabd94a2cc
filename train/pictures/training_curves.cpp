#include "attn/train/pictures/training_curves.h"

#include <algorithm>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include "attn/engine/error.h"
#include "attn/util/atomic_file.h"
#include "attn/util/json.h"
#include "attn/util/svg_chart.h"
#include "attn/train/run/run_folder.h"

namespace attn {

namespace {

// The lines of a JSON-lines log of numbers keyed by step; true/false read as
// 1/0 where `booleans` allows them.
MetricsLog read_json_lines(std::ifstream& in, const std::string& path, const std::string& name, bool booleans) {
  MetricsLog log;
  log.name = name;
  std::string line;
  int64_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    Json j;
    try {
      j = Json::parse(line);
    } catch (const Error& err) {
      ATTN_CHECK(false, "plot", path, " line ", line_no, " is not JSON: ", err.what());
    }
    ATTN_CHECK(j.is_object(), "plot", path, " line ", line_no, " is not a JSON object");
    std::map<std::string, double> values;
    for (const auto& [key, value] : j.as_object()) {
      ATTN_CHECK(value.is_number() || value.is_null() || (booleans && value.is_bool()), "plot", path, " line ",
                 line_no, ": \"", key, "\" is not a number");
      // null: a non-finite value (a diverged loss); the chart leaves the point out.
      values[key] = value.is_null()   ? std::numeric_limits<double>::quiet_NaN()
                    : value.is_bool() ? (value.as_bool() ? 1.0 : 0.0)
                                      : value.as_number();
    }
    ATTN_CHECK(values.count("step"), "plot", path, " line ", line_no, " has no \"step\"");
    log.evaluations.push_back(std::move(values));
  }
  return log;
}

}  // namespace

MetricsLog read_metrics_log(const std::string& path, const std::string& name) {
  std::ifstream in(path);
  ATTN_CHECK(in.good(), "plot", "cannot read '", path, "' (is it a run folder of attn train?)");
  MetricsLog log = read_json_lines(in, path, name, /*booleans=*/false);
  ATTN_CHECK(!log.evaluations.empty(), "plot", "'", path, "' holds no evaluations (has the run evaluated on dev yet?)");
  return log;
}

MetricsLog read_step_log(const std::string& path, const std::string& name) {
  if (!path_exists(path)) return MetricsLog{name, {}};
  std::ifstream in(path);
  ATTN_CHECK(in.good(), "plot", "cannot read '", path, "'");
  return read_json_lines(in, path, name, /*booleans=*/true);
}

std::string default_dev_metric(const MetricsLog& log) {
  ATTN_CHECK(!log.evaluations.empty(), "plot", "run '", log.name, "' has no evaluations");
  for (const char* metric : {"chunk_f1", "accuracy", "pearson", "token_accuracy"})
    if (log.evaluations.front().count(metric)) return metric;
  ATTN_CHECK(false, "plot", "run '", log.name, "' has none of the dev metrics chunk_f1, accuracy, pearson, token_accuracy");
  return "";
}

namespace {

// The columns of a run's metrics.jsonl a chart can draw (every key but step
// and epoch), for an error that names what --metric could have been.
std::string metrics_of(const MetricsLog& run) {
  std::set<std::string> names;
  for (const auto& e : run.evaluations)
    for (const auto& [key, value] : e)
      if (key != "step" && key != "epoch") names.insert(key);
  std::string list;
  for (const std::string& name : names) list += (list.empty() ? "" : ", ") + name;
  return list.empty() ? "none" : list;
}

// The four panels of the runs' step logs: each logged step's loss, its
// gradient norm before clipping (a log axis: norms fall by decades as a run
// settles), examples per second and the allocator's bytes in MiB.
std::vector<ChartPanel> step_panels(const std::vector<MetricsLog>& steps) {
  struct Column {
    const char* key;
    ChartPanel panel;
    double scale;
  };
  std::vector<Column> columns = {
      {"loss", {"loss of each logged step", "step", "loss", {}, false, true}, 1.0},
      {"grad_norm", {"gradient norm before clipping", "step", "global L2 norm", {}, true, true}, 1.0},
      {"examples_per_s", {"training examples per second", "step", "examples/s", {}, false, true}, 1.0},
      {"allocator_bytes", {"allocator memory in use", "step", "MiB", {}, false, true}, 1.0 / (1024.0 * 1024.0)},
  };
  for (size_t r = 0; r < steps.size(); ++r)
    for (Column& c : columns) {
      ChartSeries series{steps[r].name, {}, static_cast<int>(r), false};
      for (const auto& line : steps[r].evaluations) {
        const auto value = line.find(c.key);
        if (value != line.end()) series.points.emplace_back(line.at("step"), value->second * c.scale);
      }
      c.panel.series.push_back(std::move(series));
    }
  std::vector<ChartPanel> panels;
  for (Column& c : columns) panels.push_back(std::move(c.panel));
  return panels;
}

}  // namespace

std::string render_training_curves(const std::vector<MetricsLog>& runs, const std::string& metric,
                                   const std::vector<MetricsLog>& steps) {
  ATTN_CHECK(!runs.empty(), "plot", "no runs to plot");
  std::string chosen = metric;
  if (chosen.empty()) {
    chosen = default_dev_metric(runs.front());
    for (const MetricsLog& run : runs)
      ATTN_CHECK(default_dev_metric(run) == chosen, "plot", "runs '", runs.front().name, "' and '", run.name,
                 "' were selected on different dev metrics (", chosen, ", ", default_dev_metric(run),
                 "); pick one with --metric");
  }
  // Both panels start at step 0, where training starts: the trainer's first
  // evaluation comes after its first --eval-every steps, and a log that has
  // a step-0 evaluation (the model before training) gets that point drawn.
  ChartPanel loss{"training loss", "step", "loss (mean since last evaluation)", {}, false, true};
  ChartPanel dev{"dev " + chosen, "step", chosen, {}, false, true};
  for (size_t r = 0; r < runs.size(); ++r) {
    ChartSeries l{runs[r].name, {}, static_cast<int>(r), false}, d{runs[r].name, {}, static_cast<int>(r), false};
    const auto& evaluations = runs[r].evaluations;
    ATTN_CHECK(std::any_of(evaluations.begin(), evaluations.end(), [&](const auto& e) { return e.count(chosen) > 0; }),
               "plot", "run '", runs[r].name, "' has no metric '", chosen,
               "'; its metrics.jsonl has: ", metrics_of(runs[r]));
    for (const auto& e : evaluations) {
      const double step = e.at("step");
      if (e.count("train_loss")) l.points.emplace_back(step, e.at("train_loss"));
      ATTN_CHECK(e.count(chosen), "plot", "run '", runs[r].name, "' has no metric '", chosen, "' at step ", step,
                 " (its other evaluations have it)");
      d.points.emplace_back(step, e.at(chosen));
    }
    loss.series.push_back(std::move(l));
    dev.series.push_back(std::move(d));
  }
  ATTN_CHECK(steps.empty() || steps.size() == runs.size(), "plot", steps.size(), " step logs for ", runs.size(),
             " runs");
  const bool any_steps =
      std::any_of(steps.begin(), steps.end(), [](const MetricsLog& s) { return !s.evaluations.empty(); });
  if (!any_steps) return render_svg_chart("training curves", {loss, dev});
  std::vector<ChartPanel> panels = {loss, dev};
  for (ChartPanel& panel : step_panels(steps)) panels.push_back(std::move(panel));
  return render_svg_chart("training curves", panels, /*columns=*/2);
}

std::string render_run_folders(const std::vector<std::string>& run_dirs, const std::string& metric) {
  std::vector<MetricsLog> metrics, steps;
  for (const std::string& dir : run_dirs) {
    metrics.push_back(read_metrics_log(RunFiles{dir}.metrics(), dir));
    steps.push_back(read_step_log(RunFiles{dir}.steps(), dir));
  }
  return render_training_curves(metrics, metric, steps);
}

void write_run_curves(const std::string& run_dir) {
  write_file_atomically(RunFiles{run_dir}.curves(), render_run_folders({run_dir}));
}

}  // namespace attn
