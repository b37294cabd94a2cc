#include "attn/train/cli/study_command.h"

#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <iostream>

#include "attn/engine/error.h"
#include "attn/models/encoder.h"
#include "attn/train/bench/bench_options.h"
#include "attn/train/bench/bench_report.h"
#include "attn/train/bench/bench_runner.h"
#include "attn/train/bench/bench_sweep.h"
#include "attn/train/bench/efficiency_studies.h"
#include "attn/train/bench/study_report.h"
#include "attn/util/atomic_file.h"
#include "attn/util/cli_args.h"
#include "attn/util/text.h"

namespace attn {

namespace {

std::string study_list() {
  std::string out = "The studies (attn study NAME):\n";
  for (const EfficiencyStudy& s : efficiency_studies())
    out += "  " + s.name + std::string(s.name.size() < 17 ? 17 - s.name.size() : 1, ' ') + s.what + "\n" +
           std::string(19, ' ') + s.source + "\n";
  return out;
}

struct StudyFiles {
  std::string csv, svg, txt;
};

StudyFiles files_for(const std::string& dir, const std::string& name, Device device, bool sweep) {
  const std::string stem = text::join_path(dir, name + (device == Device::CUDA ? "-cuda" : ""));
  return {stem + ".csv", sweep ? stem + ".svg" : "", stem + ".txt"};
}

// The encoders the user kept with --models (labels or registry names); all by default.
std::vector<StudyEncoder> chosen_encoders(const EfficiencyStudy& study, const ArgParser& p) {
  if (!p.is_set("models")) return study.encoders;
  std::vector<StudyEncoder> out;
  std::vector<std::string> known;
  for (const StudyEncoder& e : study.encoders)
    if (std::find(known.begin(), known.end(), e.model) == known.end()) known.push_back(e.model);
  for (const std::string& name : parse_model_list(p.get("models"), "attn study")) {
    bool found = false;
    for (const StudyEncoder& e : study.encoders)
      if (e.model == name || e.label == name) out.push_back(e), found = true;
    if (!found) throw UsageError("attn study: --models: " + study.name + " has no encoder " + text::unknown_word_hint(name, known));
  }
  return out;
}

int run_table_study(const EfficiencyStudy& study, const BenchSettings& base, const StudyFiles& files) {
  TableStudyResults t;
  t.study = &study;
  t.results.assign(study.encoders.size(), std::vector<BenchResult>(study.columns.size()));
  const size_t total = study.encoders.size() * study.columns.size();
  size_t done = 0;
  for (size_t e = 0; e < study.encoders.size(); ++e) {
    const StudyEncoder& enc = study.encoders[e];
    for (size_t c = 0; c < study.columns.size(); ++c) {
      const StudyColumn& col = study.columns[c];
      BenchPoint point = sweep_point(base, enc.model, col.mode, col.length);
      point.batch = col.batch;
      point.random_lengths = col.random_lengths;
      point.hidden = enc.hidden;
      point.config = enc.config;
      std::fprintf(stderr, "[%zu/%zu] %s: %s ...\n", ++done, total, enc.label.c_str(), col.name.c_str());
      // Columns at the same shape (a time and a memory of one training
      // step) share one measurement.
      const BenchResult* same = nullptr;
      for (size_t k = 0; k < c; ++k) {
        const StudyColumn& o = study.columns[k];
        if (o.mode == col.mode && o.batch == col.batch && o.length == col.length &&
            o.random_lengths == col.random_lengths)
          same = &t.results[e][k];
      }
      t.results[e][c] = same ? *same : run_bench_point_or_error(point);
      write_file_atomically(files.csv, table_study_csv(t));
    }
  }
  const std::string report = table_study_text(t);
  std::printf("%s", report.c_str());
  write_file_atomically(files.txt, report);
  std::printf("\nwrote %s\nwrote %s\n", files.csv.c_str(), files.txt.c_str());
  return 0;
}

int run_sweep_study(const EfficiencyStudy& study, const BenchSettings& settings, const StudyFiles& files) {
  const std::string device = device_name(settings.device);
  std::printf("%s", bench_table_header().c_str());
  const std::vector<BenchResult> results =
      run_length_sweep(settings, [&](const BenchResult& latest, const std::vector<BenchResult>& all) {
        std::printf("%s", bench_table_row(latest).c_str());
        std::fflush(stdout);
        write_file_atomically(files.csv, bench_csv(all));
        write_file_atomically(files.svg, sweep_study_svg(study, all, device));
      });
  const std::string report = sweep_study_text(study, results);
  std::printf("\n%s", report.c_str());
  write_file_atomically(files.txt, report);
  std::printf("\nwrote %s\nwrote %s\nwrote %s\n", files.csv.c_str(), files.svg.c_str(), files.txt.c_str());
  return 0;
}

}  // namespace

int run_study_command(const std::vector<std::string>& args) {
  ArgParser p("study",
              "attn study NAME: one of the papers' efficiency studies on this machine, with the paper's figures\n"
              "beside ours. A table study prints and writes our figure per encoder in the paper's unit, the\n"
              "paper's, and both as ratios to the study's reference encoder (the paper's GPU and this machine\n"
              "differ; the ratios compare). A length sweep writes the CSV, a picture drawn like the paper's\n"
              "figure and the growth exponents fitted on it. Files go to --out as NAME.csv, NAME.txt (and\n"
              "NAME.svg), rewritten after every point. Without NAME: the list of studies.");
  p.option("out", "studies", "PATH: folder for the study's files (created if missing)")
      .option("device", "cpu", "cpu or cuda")
      .option("threads", "", "CPU threads (OpenMP; default: every core)")
      .option("reps", "5", "timed repetitions per point")
      .option("warmup", "1", "untimed repetitions before them")
      .option("models", "", "a comma list of the study's encoders (registry names or the paper's labels) to run; "
                            "default: all of them")
      .option("lengths", "", "a sweep's lengths instead of the paper's (list and/or START:STOP:STEP)")
      .option("mode", "", "a sweep's mode instead of the paper's: infer, train or both")
      .option("mem-limit", "8GiB", "a sweep's memory budget: a model stops at the first length whose predicted "
                                   "or measured peak exceeds it")
      .option("seed", "1", "seed of the inputs and the initialisation");
  p.example("attn study", "the list of studies");
  p.example("attn study biblosan-table2", "002 Table 2 at SNLI's shapes, ratios beside the paper's");
  p.example("attn study biblosan-fig6 --lengths 16:384:32 --reps 3", "002 Fig. 6 on every other length");
  std::vector<std::string> options, names;
  for (size_t i = 0; i < args.size(); ++i) {
    const bool takes_value = args[i].rfind("--", 0) == 0 && args[i].find('=') == std::string::npos &&
                             p.has_option(args[i].substr(2)) && args[i] != "--help";
    if (args[i].rfind("-", 0) == 0) {
      options.push_back(args[i]);
      if (takes_value && i + 1 < args.size()) options.push_back(args[++i]);
    } else {
      names.push_back(args[i]);
    }
  }
  if (!p.parse(options)) {
    std::cout << p.help() << "\n" << study_list();
    return 0;
  }
  if (names.empty()) {
    std::cout << study_list();
    return 0;
  }
  if (names.size() > 1) throw UsageError("attn study: one study at a time, got " + std::to_string(names.size()));
  EfficiencyStudy study = find_efficiency_study(names[0]);
  study.encoders = chosen_encoders(study, p);

  BenchSettings s;
  s.device = p.get_choice("device", {"cpu", "cuda"}) == "cuda" ? Device::CUDA : Device::CPU;
  s.reps = p.get_int("reps", 1);
  s.warmup = p.get_int("warmup", 0);
  s.seed = p.get_uint64("seed");
  s.mem_limit_bytes = parse_byte_size(p.get("mem-limit"), "--mem-limit", "attn study");
  if (!p.get("threads").empty()) s.threads = p.get_int("threads", 1, 4096);
  if (!study.sweep && (p.is_set("lengths") || p.is_set("mode")))
    throw UsageError("attn study: " + study.name + " is a table at the paper's shapes; --lengths and --mode are for "
                     "a length sweep (" + efficiency_studies().front().name + ")");
  s.lengths = parse_length_list(p.is_set("lengths") ? p.get("lengths") : study.lengths.empty() ? "1" : study.lengths,
                                "--lengths", "attn study");
  s.modes = p.is_set("mode") ? parse_mode_list(p.get("mode"), "attn study") : std::vector<BenchMode>{study.sweep_mode};
  s.batch = study.batch;
  for (const StudyEncoder& e : study.encoders) {
    if (!find_encoder(e.model))
      throw Error("attn study: " + study.name + " needs the encoder '" + e.model + "', which this build lacks");
    s.models.push_back(e.model);
  }
  check_bench_device(s.device);
  if (s.threads > 0) omp_set_num_threads(static_cast<int>(s.threads));

  const std::string out_dir = p.get("out");
  if (out_dir.empty()) throw UsageError("attn study: --out needs a folder");
  make_directories(out_dir);
  if (!is_directory(out_dir)) throw UsageError("attn study: --out '" + out_dir + "' is not a folder");
  const StudyFiles files = files_for(out_dir, study.name, s.device, study.sweep);
  for (const std::string& f : {files.csv, files.svg, files.txt})
    if (!f.empty()) check_output_file("attn study: output", f, {});
  std::printf("attn study %s: %s\n%s; device %s, %d threads, %lld reps after %lld warm-up\n\n", study.name.c_str(),
              study.what.c_str(), study.source.c_str(), device_name(s.device), omp_get_max_threads(),
              static_cast<long long>(s.reps), static_cast<long long>(s.warmup));
  std::fflush(stdout);
  return study.sweep ? run_sweep_study(study, s, files) : run_table_study(study, s, files);
}

}  // namespace attn
