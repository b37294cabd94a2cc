// `attn params`, `attn forward` and `attn graph`: inspect an encoder built
// from a model config, run one on inputs stored in a safetensors file, and
// draw the autograd graph of one forward. Registered in
// train/cli/commands.cpp as "params", "forward" and "graph".
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

// attn graph --model NAME|CONFIG [--head H] [--dim D] [--out FILE.dot]
// [--trace]: one forward's autograd graph as DOT (and SVG with Graphviz),
// and with --trace every kernel of that forward and of one backward pass.
int run_graph_command(const std::vector<std::string>& args);

}  // namespace attn
