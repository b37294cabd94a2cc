// The run folder: the one place its file names are spelled, the labels file
// it reads and writes, and its housekeeping when a run starts or resumes
// after a crash or SIGKILL (temporary files of writers that died, metrics
// and step lines written after the checkpoint the run resumes from).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace attn {

struct TrainOptions;
class Vocabulary;

// The paths of a run folder's files (README, "A run folder holds").
struct RunFiles {
  std::string dir;
  std::string model_config() const { return dir + "/model.cfg"; }  // the model's key = value config
  std::string run_config() const { return dir + "/run.cfg"; }      // the settings that define the run
  std::string vocab() const { return dir + "/vocab.txt"; }
  std::string chars() const { return dir + "/chars.txt"; }          // the character alphabet (char_cnn models)
  std::string labels() const { return dir + "/labels.txt"; }        // one class name per line
  std::string best() const { return dir + "/best.safetensors"; }    // best dev score
  std::string last() const { return dir + "/last.safetensors"; }    // resumable checkpoint
  std::string metrics() const { return dir + "/metrics.jsonl"; }    // one line per dev evaluation
  std::string steps() const { return dir + "/steps.jsonl"; }        // one line per logged step (--log-every)
  std::string test_metrics() const { return dir + "/test_metrics.json"; }
  std::string curves() const { return dir + "/curves.svg"; }       // metrics.jsonl drawn, after every evaluation
  std::string file(const std::string& name) const { return dir + "/" + name; }
};

// The first file of an earlier run in the folder, or "" when there is none.
std::string existing_run_file(const RunFiles& run);

// The class names, one per line (write_labels' format).
void write_labels(const RunFiles& run, const std::vector<std::string>& labels);
std::vector<std::string> read_labels(const RunFiles& run);

// Removes `*.tmp.<pid>` files in `dir` whose writer process no longer exists
// (atomic writes leave them only when killed). A missing folder is fine.
void remove_stale_temporaries(const std::string& dir);

// Rewrites the JSON-lines log `path` (metrics.jsonl, steps.jsonl)
// atomically, keeping the lines whose "step" is at most `step`, in order; a
// torn or unparsable line (a write cut off by SIGKILL) is dropped too. A
// missing file is fine.
void keep_metrics_up_to(const std::string& path, int64_t step);

// Before a run starts in `o.run_dir`: removes stale temporaries, refuses a
// folder that already holds a run unless `o.resume` or `o.overwrite`, and on
// `o.resume` refuses settings (run.cfg, model.cfg) that differ from the
// run's, listing each difference.
void check_run_folder(const TrainOptions& o);

// Everything a run folder pins down so `--resume`, `attn eval` and
// `attn predict` rebuild the same model: model.cfg, run.cfg, vocab.txt,
// labels.txt, and chars.txt when the vocabulary has characters. With `o.overwrite`, first removes what the old run produced.
// Called only once the configuration has proved valid (the model was built).
void write_run_files(const TrainOptions& o, const Vocabulary& vocab, const std::vector<std::string>& labels);

}  // namespace attn
