// `attn spirals`: trains the MLP of train/cli/spirals.h and prints its accuracy.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "attn/util/cli_args.h"
#include "attn/train/cli/commands.h"
#include "attn/train/cli/spirals.h"

namespace attn {

int run_spirals_command(const std::vector<std::string>& args) {
  SpiralConfig c;
  std::ostringstream default_lr;  // "0.3", not std::to_string's "0.300000"
  default_lr << c.lr;
  ArgParser p("spirals", "Trains a small MLP with plain SGD on two interleaved spirals and reports its accuracy.");
  p.option("points", std::to_string(c.per_class), "points per class")
      .option("hidden", std::to_string(c.hidden), "hidden units per layer")
      .option("steps", std::to_string(c.steps), "full-batch SGD steps")
      .option("lr", default_lr.str(), "learning rate")
      .option("seed", std::to_string(c.seed), "random seed (data and initialisation)");
  p.example("attn spirals --steps 2000", "a longer run; prints the final accuracy");
  if (!p.parse(args)) {
    std::cout << p.help();
    return 0;
  }
  c.per_class = p.get_int("points");
  c.hidden = p.get_int("hidden");
  c.steps = p.get_int("steps");
  c.lr = p.get_double("lr");
  c.seed = static_cast<uint64_t>(p.get_int("seed"));
  if (c.per_class < 1 || c.hidden < 1 || c.steps < 1 || !(c.lr > 0))
    throw UsageError("attn spirals: --points, --hidden and --steps must be positive and --lr above 0");

  auto start = std::chrono::steady_clock::now();
  SpiralResult r = train_spiral_mlp(c, [&](int64_t step, double loss) {
    std::fprintf(stderr, "\rstep %6lld/%lld  loss %.4f", static_cast<long long>(step),
                 static_cast<long long>(c.steps), loss);
  });
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::fprintf(stderr, "\n");
  std::printf("{\"task\": \"spirals\", \"train_accuracy\": %.4f, \"final_loss\": %.5f, \"seconds\": %.2f}\n",
              r.accuracy, r.final_loss, seconds);
  return 0;
}

}  // namespace attn
