#include "attn/train/run/run_folder.h"

#include <dirent.h>
#include <signal.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <vector>

#include "attn/engine/error.h"
#include "attn/train/data/vocab.h"
#include "attn/train/run/run_settings.h"
#include "attn/train/trainer.h"
#include "attn/util/atomic_file.h"
#include "attn/util/json.h"

namespace attn {

namespace {

// The pid of a "<name>.tmp.<pid>" file, or 0 when the name has another form.
long temporary_pid(const std::string& name) {
  const size_t at = name.rfind(".tmp.");
  if (at == std::string::npos || at + 5 >= name.size()) return 0;
  const std::string digits = name.substr(at + 5);
  if (digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 9) return 0;
  return std::strtol(digits.c_str(), nullptr, 10);
}

bool process_alive(long pid) { return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM; }

}  // namespace

void remove_stale_temporaries(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return;
  std::vector<std::string> stale;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    const long pid = temporary_pid(name);
    if (pid > 0 && !process_alive(pid)) stale.push_back(dir + "/" + name);
  }
  ::closedir(d);
  for (const std::string& path : stale) std::remove(path.c_str());
}

void keep_metrics_up_to(const std::string& path, int64_t step) {
  if (!path_exists(path)) return;
  std::ifstream in(path);
  std::string kept, line;
  bool changed = false;
  while (std::getline(in, line)) {
    bool keep = false;
    try {
      const Json j = Json::parse(line);
      const Json* s = j.is_object() ? j.find("step") : nullptr;
      keep = s && s->is_number() && s->as_number() <= static_cast<double>(step);
    } catch (const Error&) {
      keep = false;  // a torn line
    }
    if (keep) kept += line + "\n";
    else changed = true;
  }
  if (changed) write_file_atomically(path, kept);
}

std::string existing_run_file(const RunFiles& run) {
  for (const std::string& path : {run.model_config(), run.run_config(), run.last(), run.best(), run.metrics(),
                                  run.steps()})
    if (path_exists(path)) return path;
  return "";
}

void write_labels(const RunFiles& run, const std::vector<std::string>& labels) {
  std::string text;
  for (const std::string& l : labels) text += l + "\n";
  write_file_atomically(run.labels(), text);
}

std::vector<std::string> read_labels(const RunFiles& run) {
  std::ifstream in(run.labels());
  ATTN_CHECK(in.good(), "run", "cannot read '", run.labels(), "'");
  std::vector<std::string> labels;
  for (std::string line; std::getline(in, line);) labels.push_back(line);
  return labels;
}

void check_run_folder(const TrainOptions& o) {
  const RunFiles run{o.run_dir};
  remove_stale_temporaries(o.run_dir);
  const std::string existing = existing_run_file(run);
  ATTN_CHECK(o.resume || o.overwrite || existing.empty(), "train", "'", o.run_dir, "' already holds a run ('",
             existing, "'); continue it with --resume, replace it with --overwrite, or choose another --run");
  if (!o.resume) return;
  ATTN_CHECK(!existing.empty(), "train", "--resume: no checkpoint at '", run.last(), "' (the folder holds no run)");
  const std::vector<std::string> diffs =
      run_differences(Config::load(run.run_config()), Config::load(run.model_config()), o);
  std::string listed;
  for (const std::string& d : diffs) listed += "\n  " + d;
  ATTN_CHECK(diffs.empty(), "train", "--resume: these settings differ from the run in '", o.run_dir,
             "' (only --epochs, --max-steps, --eval-every, --checkpoint-every, --log-every, --device, "
             "--quiet and --detect-anomaly may change; start a new --run instead):", listed);
}

void write_run_files(const TrainOptions& o, const Vocabulary& vocab, const std::vector<std::string>& labels) {
  const RunFiles run{o.run_dir};
  make_directories(o.run_dir);
  if (o.overwrite)  // what the old run produced; the files below are replaced
    for (const std::string& path : {run.metrics(), run.steps(), run.curves(), run.best(), run.last(),
                                    run.test_metrics(), run.chars()})
      std::remove(path.c_str());
  write_file_atomically(run.model_config(), o.model.to_text());
  write_file_atomically(run.run_config(), run_settings(o).to_text());
  vocab.save(run.vocab());
  if (vocab.characters()) vocab.characters()->save(run.chars());
  write_labels(run, labels);
}

}  // namespace attn
