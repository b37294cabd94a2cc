// `attn params` and `attn forward`: inspect an encoder built from a model
// config, and run one on inputs stored in a safetensors file. The lead
// registers them in train/cli/commands.cpp as "params" and "forward".
#pragma once
#include <string>
#include <vector>

namespace attn {

// attn params --model CONFIG [--input-dim D]: one row per parameter and
// buffer (name, shape, count), then the totals.
int run_params_command(const std::vector<std::string>& args);

// attn forward --model CONFIG --weights W --input X --output Y
// [--init-weights] [--seed S]: runs the encoder in evaluation mode on X's "x"
// (and "lengths" or "mask") and writes "tokens" and "sentence" to Y.
int run_forward_command(const std::vector<std::string>& args);

}  // namespace attn
