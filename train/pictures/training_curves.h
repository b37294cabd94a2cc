// Training curves from run folders' metrics.jsonl (one JSON object per dev
// evaluation: step, epoch, train_loss, the dev metrics): an SVG with two
// panels, training loss and a dev metric against step, one line per run.
// Runs with a steps.jsonl (train/step_log.h, one line per logged step) get
// two more rows of panels under them: each logged step's loss and gradient
// norm before clipping, examples per second and the allocator's bytes.
// `attn plot` draws several runs; the trainer redraws curves.svg in the run
// folder after every dev evaluation.
#pragma once
#include <map>
#include <string>
#include <vector>

namespace attn {

struct MetricsLog {
  std::string name;                                // the legend entry
  std::vector<std::map<std::string, double>> evaluations;  // one per line, in order
};

// Throws naming the file for a missing or empty file, and the line for one
// that is not a JSON object of numbers with a "step" (null, a non-finite
// value, reads as NaN and is not drawn).
MetricsLog read_metrics_log(const std::string& path, const std::string& name);

// The dev metric a log's runs were selected on: chunk_f1, accuracy, pearson
// or token_accuracy, the first one its first evaluation has.
std::string default_dev_metric(const MetricsLog& log);

// A run's steps.jsonl, read as read_metrics_log reads metrics.jsonl, except
// that "clipped" (true/false) reads as 1/0 and a missing or empty file (a
// run without --log-every, or resumed before its first logged step) is a log
// with no lines.
MetricsLog read_step_log(const std::string& path, const std::string& name);

// metric "" = each run's default_dev_metric (they must agree). `steps`,
// when not empty, holds each run's step log in the order of `runs`; when
// any of them has lines, the step panels are drawn. Every panel's x axis
// starts at step 0. Throws when a run lacks the metric, naming the metrics
// its log has.
std::string render_training_curves(const std::vector<MetricsLog>& runs, const std::string& metric = "",
                                   const std::vector<MetricsLog>& steps = {});

// The runs in these folders drawn: metrics.jsonl, and steps.jsonl where a
// folder has one.
std::string render_run_folders(const std::vector<std::string>& run_dirs, const std::string& metric = "");

// Rewrites <run_dir>/curves.svg (atomically) from <run_dir>/metrics.jsonl
// and steps.jsonl.
void write_run_curves(const std::string& run_dir);

}  // namespace attn
