// `attn predict`: reads sentences from standard input (one per line; for
// pair and relatedness tasks the two sentences separated by a tab) and writes
// one prediction per line.
#include <cstdio>
#include <iostream>

#include "attn/engine/cuda/cuda_backend.h"
#include "attn/engine/error.h"
#include "attn/util/cli_args.h"
#include "attn/train/cli/commands.h"
#include "attn/train/evaluate.h"
#include "attn/train/saved_run.h"
#include "attn/train/data/tokenizer.h"

namespace attn {

int run_predict_command(const std::vector<std::string>& args) {
  ArgParser p("predict",
              "Reads one input per line from stdin and prints one prediction per line: the label (classify, pair),\n"
              "the score (relatedness) or the space-separated tags (tag). Pair inputs: two sentences separated by a tab.");
  p.option("run", "", "run folder written by attn train (required)")
      .option("weights", "best.safetensors", "weights file inside the run folder (best.safetensors, or last.safetensors: the latest checkpoint)")
      .option("device", "cpu", "cpu or cuda (the model moves there; batches follow it)");
  if (!p.parse(args)) {
    std::cout << p.help();
    return 0;
  }
  if (p.get("run").empty()) throw UsageError("attn predict: --run is required");
  const Device device = parse_device(p.get("device"), "predict");  // before any work: fails fast without a GPU
  SavedRun run = load_saved_run(p.get("run"), p.get("weights"));
  run.model->to(device);
  std::vector<Example> examples;
  std::string line;
  int64_t line_no = 0;
  while (std::getline(std::cin, line)) {
    ++line_no;
    Example e;
    if (run.task == TaskKind::Pair || run.task == TaskKind::Relatedness) {
      size_t tab = line.find('\t');
      ATTN_CHECK(tab != std::string::npos, "predict", "stdin line ", line_no,
                 ": expected two sentences separated by a tab");
      e.tokens = tokenize(line.substr(0, tab));
      e.tokens_b = tokenize(line.substr(tab + 1));
    } else {
      e.tokens = tokenize(line);
    }
    e.label = 0;
    e.score = 1;
    e.tags.assign(e.tokens.size(), 0);
    examples.push_back(std::move(e));
  }
  if (examples.empty()) return 0;
  EvalOptions eo;
  eo.max_len = run.max_len;
  std::vector<Prediction> preds = predict(*run.model, examples, run.vocab, eo);
  for (const Prediction& pr : preds) {
    switch (run.task) {
      case TaskKind::Classify:
      case TaskKind::Pair: std::printf("%s\n", run.labels.at(static_cast<size_t>(pr.label)).c_str()); break;
      case TaskKind::Relatedness: std::printf("%.4f\n", pr.score); break;
      case TaskKind::Tag: {
        std::string out;
        for (int64_t t : pr.tags) out += (out.empty() ? "" : " ") + run.labels.at(static_cast<size_t>(t));
        std::printf("%s\n", out.c_str());
        break;
      }
    }
  }
  return 0;
}

}  // namespace attn
