// `attn eval`: a trained run's best checkpoint on a data split.
#include <cstdio>
#include <iostream>

#include "attn/engine/cuda/cuda_backend.h"
#include "attn/engine/error.h"
#include "attn/util/cli_args.h"
#include "attn/train/cli/commands.h"
#include "attn/train/evaluate.h"
#include "attn/train/cli/translate_eval.h"
#include "attn/train/translation_run.h"
#include "attn/train/run/saved_run.h"
#include "attn/train/data/task_data.h"

namespace attn {

int run_eval_command(const std::vector<std::string>& args) {
  ArgParser p("eval", "Evaluates a trained run (its best checkpoint) on a split of a data set and prints JSON.");
  p.option("run", "", "PATH: run folder written by attn train (required)")
      .option("data", "", "PATH: data folder or file (default: the run's own data)")
      .option("format", "", "data format (default: the run's)")
      .option("split", "test", "train, dev, test, or a split the data reports by name (multinli: matched, mismatched)")
      .option("weights", "best.safetensors", "FILE: weights file inside the run folder (best.safetensors, or last.safetensors: the latest checkpoint)")
      .option("device", "cpu", "cpu or cuda (the model moves there; batches follow it)")
      .option("batch", "64", "examples per batch")
      .option("cache", "", "PATH: cache folder for downloaded data")
      .flag("allow-similar-labels", "as for attn train (needed again when the run was trained with it)");
  p.example("attn eval --run runs/mtsa-spam", "the best checkpoint of the run on its own test split, as one JSON line");
  p.example("attn eval --run runs/mtsa-spam --split dev --weights last.safetensors", "the latest checkpoint on the dev split");
  if (!p.parse(args)) {
    std::cout << p.help();
    return 0;
  }
  if (p.get("run").empty()) throw UsageError("attn eval: --run is required");
  if (is_translation_run(p.get("run"))) return run_translation_eval(p, args);
  const Device device = parse_device(p.get_choice("device", {"cpu", "cuda"}), "eval");  // before any work: fails fast without a GPU
  SavedRun run = load_saved_run(p.get("run"), p.get("weights"));
  run.model->to(device);
  DataSpec spec;
  spec.task = run.task;
  spec.data = p.is_set("data") ? p.get("data") : run.run_config.get("data", "");
  spec.format = p.is_set("format") ? p.get("format") : run.run_config.get("format", "auto");
  spec.cache_dir = p.get("cache");
  spec.allow_similar_labels = p.is_set("allow-similar-labels");
  spec.verbose = false;
  Dataset data = load_task_data(spec);
  const std::string split = p.get("split");
  const std::vector<Example>* examples = find_split(data, split);
  if (!examples) throw UsageError("attn eval: unknown --split '" + split + "' (this data has " + split_names(data) + ")");
  ATTN_CHECK(data.label_names == run.labels, "eval", "the data's labels differ from the run's labels.txt");
  EvalOptions eo;
  eo.batch_size = p.get_int("batch");
  eo.max_len = run.max_len;
  EvalResult r = evaluate(*run.model, *examples, run.vocab, run.labels, eo);
  std::printf("{\"%s\": %s, \"examples\": %zu}\n", split.c_str(), metrics_json(r.metrics).c_str(), examples->size());
  return 0;
}

}  // namespace attn
