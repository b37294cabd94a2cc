// `attn gradcheck --model NAME|all` and `--config FILE`: the sampled gradient
// check of whole task models (train/model_gradcheck.h), one summary line per
// model. gradcheck_command.cpp declares the options and calls this.
#pragma once
#include "attn/util/cli_args.h"

namespace attn {

// The options gradcheck_command.cpp declares for model checks.
void add_model_gradcheck_options(ArgParser& p);

// Runs the checks the parsed options ask for; returns the exit code (1 when
// any model fails).
int run_model_gradcheck(const ArgParser& p);

}  // namespace attn
