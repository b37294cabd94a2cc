#include "train/commands.h"

namespace attn {

const std::vector<Command>& all_commands() {
  static const std::vector<Command> commands = {
      {"gradcheck", "check every op's gradient against central differences", run_gradcheck_command},
  };
  return commands;
}

}  // namespace attn
