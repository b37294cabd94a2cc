// The `attn` subcommands. Each takes its arguments (after the subcommand
// name), prints its own --help, and returns the process exit code.
#pragma once
#include <string>
#include <vector>

namespace attn {

struct Command {
  const char* name;
  const char* summary;
  int (*run)(const std::vector<std::string>& args);
};

// Every subcommand, in the order `attn --help` lists them.
const std::vector<Command>& all_commands();

// The registered encoders for help texts (models/encoder.h is the list):
// "mtsa, disan, ... or bow", and one "  name  summary" line per encoder
// (no final line end).
std::string encoder_choices();
std::string encoder_summaries();

int run_gradcheck_command(const std::vector<std::string>& args);
int run_spirals_command(const std::vector<std::string>& args);
int run_mirrored_sum_command(const std::vector<std::string>& args);
int run_train_command(const std::vector<std::string>& args);
int run_presets_command(const std::vector<std::string>& args);
int run_eval_command(const std::vector<std::string>& args);
int run_predict_command(const std::vector<std::string>& args);
int run_bleu_command(const std::vector<std::string>& args);
int run_translate_command(const std::vector<std::string>& args);
int run_bpe_command(const std::vector<std::string>& args);
int run_ttest_command(const std::vector<std::string>& args);
int run_synth_translation_command(const std::vector<std::string>& args);

}  // namespace attn
