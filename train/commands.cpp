#include "train/commands.h"

#include "train/bench_matmul.h"

namespace attn {

const std::vector<Command>& all_commands() {
  static const std::vector<Command> commands = {
      {"gradcheck", "check every op's gradient against central differences", run_gradcheck_command},
      {"spirals", "train a small MLP with SGD on two interleaved spirals", run_spirals_command},
      {"bench-matmul", "time a float32 matmul through the engine and through OpenBLAS directly", run_bench_matmul},
  };
  return commands;
}

}  // namespace attn
