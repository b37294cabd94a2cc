#include "attn/train/cli/commands.h"

#include <algorithm>

#include "attn/models/encoder.h"
#include "attn/train/bench/bench_decode.h"
#include "attn/train/bench/bench_matmul.h"
#include "attn/train/cli/bench_command.h"
#include "attn/train/cli/model_commands.h"
#include "attn/train/cli/picture_commands.h"
#include "attn/train/cli/study_command.h"

namespace attn {

const std::vector<Command>& all_commands() {
  static const std::vector<Command> commands = {
      {"train", "train a model on a task (default: MTSA on the SpamAssassin corpus)", run_train_command},
      {"presets", "list the papers' experiments that `attn train --preset NAME` runs, with their sources",
       run_presets_command},
      {"eval", "evaluate a trained run on a data split", run_eval_command},
      {"predict", "predict labels for sentences read from stdin", run_predict_command},
      {"explain", "draw what a trained model attends to for sentences (one SVG each)", run_explain_command},
      {"plot", "draw training loss and the dev metric of runs against step (SVG)", run_plot_command},
      {"params", "list an encoder's parameters (from a model config)", run_params_command},
      {"forward", "run an encoder on inputs from a safetensors file", run_forward_command},
      {"graph", "write the autograd graph of one forward as Graphviz DOT/SVG; --trace prints every kernel",
       run_graph_command},
      {"gradcheck", "check every op's gradient against central differences", run_gradcheck_command},
      {"spirals", "train a small MLP with SGD on two interleaved spirals", run_spirals_command},
      {"mirrored-sum", "the Multi-Scale Transformer paper's mirrored summation task: test MSE against K (CSV, SVG)",
       run_mirrored_sum_command},
      {"bleu", "corpus BLEU of translations as sacreBLEU prints it; with two systems, the paired bootstrap p-value",
       run_bleu_command},
      {"ttest", "t-test of two systems' scores over training runs (seed 001 Table 6's significance test)",
       run_ttest_command},
      {"bpe", "learn joint BPE codes from text files, or encode a file with them (subword-nmt's algorithm)",
       run_bpe_command},
      {"translate", "translate sentences (stdin or a file) with a run of attn train --task translate",
       run_translate_command},
      {"synth-translation", "write a synthetic SVO -> SOV translation task as parallel text (train/dev/test)",
       run_synth_translation_command},
      {"bench", "time and memory of every encoder against sequence length (the papers' efficiency study)",
       run_bench_command},
      {"study", "run one of the papers' efficiency studies here, our ratios beside the paper's (CSV, report, SVG)",
       run_study_command},
      {"bench-matmul", "time a float32 matmul through the engine and through OpenBLAS directly", run_bench_matmul},
      {"bench-decode", "time greedy decoding of the translation model per sentence, with and without the cache",
       run_bench_decode},
  };
  return commands;
}

std::string encoder_choices() {
  const auto& registry = encoder_registry();
  std::string text;
  for (size_t i = 0; i < registry.size(); ++i)
    text += std::string(i == 0 ? "" : i + 1 == registry.size() ? " or " : ", ") + registry[i].name;
  return text;
}

std::string encoder_summaries() {
  size_t width = 0;
  for (const EncoderInfo& info : encoder_registry()) width = std::max(width, std::string(info.name).size());
  std::string text;
  for (const EncoderInfo& info : encoder_registry())
    text += std::string(text.empty() ? "" : "\n") + "  " + info.name +
            std::string(width - std::string(info.name).size() + 2, ' ') + info.summary;
  return text;
}

}  // namespace attn
