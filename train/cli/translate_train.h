// `attn train --task translate`: the flags of train_command.cpp that a
// translation run takes, read into TranslationRunOptions (train/translation_run.h).
#pragma once
#include <string>
#include <vector>

#include "attn/models/config.h"
#include "attn/util/cli_args.h"

namespace attn {

// The options only translation takes; any other task refuses them when given.
const std::vector<std::string>& translate_only_options();

// Trains, prints test_metrics.json's line; `args` are the command line (to
// refuse flags that do not apply), `preset_model` the preset's model keys.
int run_translate_training(const ArgParser& p, const std::vector<std::string>& args, const Config& preset_model,
                           const std::string& preset);

}  // namespace attn
