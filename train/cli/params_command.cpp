// `attn params`: builds the encoder a model config describes and lists its
// parameters and buffers, so a config's size is known before training.
#include <algorithm>
#include <cstdio>
#include <iostream>

#include "attn/engine/error.h"
#include "attn/util/text.h"
#include "attn/models/encoder.h"
#include "attn/util/cli_args.h"
#include "attn/train/cli/commands.h"
#include "attn/train/cli/model_commands.h"
#include "attn/train/model_files.h"

namespace attn {

int run_params_command(const std::vector<std::string>& args) {
  ArgParser p("params", "Builds the encoder of a model config and lists its parameters and buffers with their "
                        "shapes and sizes.\nEncoders (config key `encoder`, or --model NAME for its defaults):\n" +
                            encoder_summaries());
  p.option("model", "", "model config file (key `encoder` picks the mechanism), or an encoder name: " +
                            encoder_choices())
      .option("input-dim", "", "input width (default: the config's embedding_dim, else 300)");
  if (!p.parse(args)) {
    std::cout << p.help();
    return 0;
  }
  if (!p.is_set("model")) throw UsageError("attn params: --model CONFIG is required");
  const std::string path = p.get("model");
  // A registered name with no file of that name: the encoder with its defaults.
  Config config;
  if (find_encoder(path) && !text::file_exists(path)) config.set("encoder", path);
  else config = Config::load(path);
  int64_t input_dim = input_dim_of(config);
  if (p.is_set("input-dim")) input_dim = p.get_int("input-dim");
  if (input_dim <= 0) throw UsageError("attn params: the input dimension must be positive, got " +
                                       std::to_string(input_dim));
  Generator init(1), noise(2);
  std::unique_ptr<Encoder> encoder =
      build_encoder_from_config(config, path, input_dim, DType::F32, init, noise);

  const auto params = encoder->named_parameters();
  const auto state = encoder->named_state();
  size_t width = 4;
  for (const auto& [name, t] : state) width = std::max(width, name.size());
  std::printf("%-*s  %-16s %12s  %s\n", static_cast<int>(width), "name", "shape", "count", "kind");
  int64_t total = 0, trainable = 0;
  for (const auto& [name, t] : state) {
    bool parameter = false;  // parameters are the trained subset of the state
    for (const auto& [pn, pt] : params) parameter = parameter || pn == name;
    std::printf("%-*s  %-16s %12lld  %s\n", static_cast<int>(width), name.c_str(), shape_str(t.shape()).c_str(),
                static_cast<long long>(t.numel()), parameter ? "parameter" : "buffer");
    total += t.numel();
    if (parameter) trainable += t.numel();
  }
  std::printf("total: %lld values in %zu tensors (%lld in parameters, %lld in buffers); encoder '%s', input dim "
              "%lld, token dim %lld, sentence dim %lld\n",
              static_cast<long long>(total), state.size(), static_cast<long long>(trainable),
              static_cast<long long>(total - trainable), encoder_name(config).c_str(),
              static_cast<long long>(input_dim), static_cast<long long>(encoder->token_dim()),
              static_cast<long long>(encoder->sentence_dim()));
  return 0;
}

}  // namespace attn
