// `attn translate`: a translation run's model on raw sentences, one a line,
// from stdin or a file; one translation a line on stdout.
#include <fstream>
#include <iostream>

#include "attn/train/cli/commands.h"
#include "attn/train/translation_run.h"
#include "attn/util/cli_args.h"
#include "attn/util/text.h"

namespace attn {

namespace {

std::vector<std::string> read_lines(std::istream& in) {
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(line);
  }
  return lines;
}

}  // namespace

int run_translate_command(const std::vector<std::string>& args) {
  ArgParser p("translate", "Translates sentences with a run of `attn train --task translate`: one raw sentence a line\n"
                           "from --input or stdin, one translation a line on stdout (an empty line stays empty).\n"
                           "The run's BPE codes cut the words; the output is detokenised.");
  p.option("run", "", "PATH: run folder written by attn train --task translate (required)")
      .option("input", "", "FILE: the sentences (default: stdin)")
      .option("weights", "last.safetensors", "FILE: weights inside the run folder (last.safetensors, as the run's "
                                             "test BLEU, or best.safetensors: the best dev BLEU)")
      .option("beam", "0", "beam size, 1 = greedy (0: the run's, t2t's 4)")
      .option("alpha", "-1", "FLOAT: length penalty exponent (-1: the run's, t2t's 0.6)")
      .option("max-length", "0", "most output units per sentence (0: source length + 50, t2t's)");
  p.example("echo 'The house is small.' | attn translate --run runs/mtsa-ende", "one sentence from stdin");
  p.example("attn translate --run runs/mtsa-ende --input newstest2014.en --beam 4 > out.de", "a file");
  if (!p.parse(args)) {
    std::cout << p.help();
    return 0;
  }
  if (p.get("run").empty()) throw UsageError("attn translate: --run is required");
  BeamSearchOptions search;
  const int64_t beam = p.get_int("beam", 0, 64);
  const double alpha = p.get_double("alpha", -1, 10);
  if (alpha < 0 && alpha != -1) throw UsageError("attn translate: --alpha must be -1 (the run's) or in [0, 10]");
  search.max_length = p.get_int("max-length", 0, 100000);
  const std::string input = p.get("input");
  if (p.is_set("input") && !text::is_regular_file(input))
    throw UsageError("attn translate: --input '" + input + "' is not a readable file");
  const TranslationRun run = load_translation_run(p.get("run"), p.get("weights"));
  search.beam_size = beam > 0 ? beam : run.run_config.get_int("beam", 4);
  search.alpha = alpha >= 0 ? alpha : run.run_config.get_double("alpha", 0.6);
  std::vector<std::string> lines;
  if (input.empty()) {
    lines = read_lines(std::cin);
  } else {
    std::ifstream in(input, std::ios::binary);
    lines = read_lines(in);
  }
  for (const std::string& out : translate_text(run, lines, search)) std::cout << out << "\n";
  return 0;
}

}  // namespace attn
