// `attn explain` and `attn plot`: pictures of what a trained model attends
// to, and of its training curves. Registered in train/cli/commands.cpp.
#pragma once
#include <string>
#include <vector>

namespace attn {

// attn explain --run R [--text SENTENCE] [--out DIR] [--feature K]
// [--max-tokens N]: one SVG per sentence (from --text, else one per stdin line).
int run_explain_command(const std::vector<std::string>& args);

// attn plot RUN [RUN...] [--out FILE] [--metric NAME]: training loss and the
// dev metric against step, the runs overlaid.
int run_plot_command(const std::vector<std::string>& args);

}  // namespace attn
