// `attn plot`: training loss and the dev metric of one or more runs against
// step, from their metrics.jsonl, and the logged steps from their
// steps.jsonl where they have one, as one SVG.
#include <cstdio>
#include <iostream>

#include "attn/util/atomic_file.h"
#include "attn/util/cli_args.h"
#include "attn/train/cli/picture_commands.h"
#include "attn/train/pictures/training_curves.h"

namespace attn {

int run_plot_command(const std::vector<std::string>& args) {
  ArgParser p("plot",
              "attn plot RUN [RUN...]: draws the training loss and the dev metric against step from each run\n"
              "folder's metrics.jsonl, the runs overlaid with a legend, as one SVG. Where a run folder has a\n"
              "steps.jsonl (attn train --log-every), two rows more draw each logged step's loss, gradient norm\n"
              "before clipping, examples per second and allocator memory. (attn train keeps curves.svg in its\n"
              "run folder up to date the same way.)");
  p.option("out", "curves.svg", "FILE: the SVG to write")
      .option("metric", "", "dev metric to draw (default: the one the runs were selected on, e.g. accuracy)");
  std::vector<std::string> options, runs;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].rfind("--", 0) == 0) {
      options.push_back(args[i]);
      // --out and --metric take a value unless written --name=value.
      if ((args[i] == "--out" || args[i] == "--metric") && i + 1 < args.size()) options.push_back(args[++i]);
    } else {
      runs.push_back(args[i]);
    }
  }
  p.example("attn plot runs/mtsa-spam runs/transformer-spam --out curves.svg", "two runs overlaid: training loss and dev metric against step");
  if (!p.parse(options)) {
    std::cout << p.help();
    return 0;
  }
  if (runs.empty()) throw UsageError("attn plot: name at least one run folder");
  write_file_atomically(p.get("out"), render_run_folders(runs, p.get("metric")));
  std::printf("%s: %zu run%s\n", p.get("out").c_str(), runs.size(), runs.size() == 1 ? "" : "s");
  return 0;
}

}  // namespace attn
