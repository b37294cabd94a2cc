// `attn eval --run R` on a translation run: corpus BLEU of a split, as JSON.
#pragma once
#include <string>
#include <vector>

#include "attn/util/cli_args.h"

namespace attn {

// `p` is eval's parsed parser; `args` its command line (flags that do not
// apply to translation are refused).
int run_translation_eval(const ArgParser& p, const std::vector<std::string>& args);

}  // namespace attn
