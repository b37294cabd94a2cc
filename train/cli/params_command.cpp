// `attn params`: builds the whole model a config describes (word embeddings,
// encoder, task head) and lists its parameters and buffers, so a config's
// size is known before training; the total is the count `attn train` logs.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <limits>
#include <map>

#include "attn/engine/error.h"
#include "attn/models/encoder.h"
#include "attn/models/model_config_check.h"
#include "attn/models/task_model.h"
#include "attn/train/cli/commands.h"
#include "attn/train/cli/model_commands.h"
#include "attn/train/model_files.h"
#include "attn/train/run/run_folder.h"
#include "attn/train/run/saved_run.h"
#include "attn/util/cli_args.h"
#include "attn/util/text.h"

namespace attn {

namespace {

// What the task model is built for: the config, the task, its classes and
// the vocabulary size (0: unknown, the embedding rows are not counted).
struct ParamsQuery {
  Config config;
  std::string source;
  TaskKind task = TaskKind::Classify;
  int64_t classes = 2;
  int64_t vocab_size = 0;
};

// The run's model config, task, classes and vocabulary size, read and
// checked as `attn eval` and `attn predict` read them.
ParamsQuery query_from_run(const std::string& dir) {
  SavedRun run = read_saved_run_files(dir);
  ParamsQuery q;
  q.source = RunFiles{dir}.model_config();
  q.config = std::move(run.model_config);
  q.task = run.task;
  q.classes = run.classes;
  q.vocab_size = run.vocab.size();
  return q;
}

// Which of the task model's three parts a state name belongs to.
std::string part_of(const std::string& name) { return name.substr(0, name.find('.')); }

}  // namespace

int run_params_command(const std::vector<std::string>& args) {
  ArgParser p("params", "Builds the whole model of a config (word embeddings, encoder, task head) and lists its "
                        "parameters\nand buffers with their shapes and sizes, with a subtotal per part; the total "
                        "is the count\n`attn train` logs. Encoders (config key `encoder`, or --model NAME for its "
                        "defaults):\n" + encoder_summaries());
  p.option("model", "", "model config file (key `encoder` picks the mechanism), or an encoder name: " +
                            encoder_choices())
      .option("run", "", "PATH: a run folder instead of --model: its model.cfg, task, labels and vocabulary")
      .option("task", "classify", "classify, pair, relatedness, tag, srl or locate (the head)")
      .option("classes", "2", "classes of the head (classify, pair, tag; relatedness takes the config's)")
      .option("vocab-size", "", "INT: rows of the word embeddings (without it the embeddings are not counted)")
      .option("input-dim", "", "INT: the embedding width (default: the config's embedding_dim, else 300)");
  p.example("attn params --model mtsa --vocab-size 20000", "MTSA at its defaults with a 20,000-word vocabulary");
  p.example("attn params --run runs/mtsa-spam", "the model of a run, as its training log counted it");
  if (!p.parse(args)) {
    std::cout << p.help();
    return 0;
  }
  if (p.is_set("model") == p.is_set("run")) throw UsageError("attn params: give one of --model CONFIG and --run RUN");
  ParamsQuery q;
  if (p.is_set("run")) {
    for (const char* flag : {"task", "classes", "vocab-size"})
      if (p.is_set(flag))
        throw UsageError(std::string("attn params: --") + flag + " comes from the run folder; drop it with --run");
    q = query_from_run(p.get("run"));
  } else {
    q.source = p.get("model");
    // A registered name with no file of that name: the encoder with its defaults.
    if (find_encoder(q.source) && !text::is_regular_file(q.source)) q.config.set("encoder", q.source);
    else q.config = Config::load(q.source);
    q.task = task_from_name(p.get_choice("task", {"classify", "pair", "relatedness", "tag", "srl", "locate"}));
    q.classes = q.task == TaskKind::Relatedness ? relatedness_classes(q.config) : p.get_int("classes", 2, 1 << 20);
    if (p.is_set("vocab-size")) q.vocab_size = p.get_int("vocab-size", 2, int64_t{1} << 31);
  }
  if (p.is_set("input-dim")) q.config.set(kInputDimKey, std::to_string(p.get_int("input-dim", 1, 65536)));
  check_model_config(q.config, "the model config '" + q.source + "'");
  const int64_t dim = input_dim_of(q.config);

  // Built with the smallest vocabulary: the embedding's count is its rows
  // times its width, and a large vocabulary need not be allocated to say so.
  Generator init(1), noise(2);
  TaskModel model(q.config, q.task, 2, q.classes, DType::F32, init, noise);
  q.config.check_all_used("the model config '" + q.source + "'");

  const auto params = model.named_parameters();
  const auto state = model.named_state();
  auto is_parameter = [&](const std::string& name) {
    return std::any_of(params.begin(), params.end(), [&](const auto& np) { return np.first == name; });
  };
  size_t width = 4;
  for (const auto& [name, t] : state) width = std::max(width, name.size());
  std::printf("%-*s  %-16s %12s  %s\n", static_cast<int>(width), "name", "shape", "count", "kind");
  std::map<std::string, int64_t> part_parameters;
  int64_t parameters = 0, buffers = 0;
  for (const auto& [name, t] : state) {
    std::vector<int64_t> shape = t.shape();
    std::string shape_text = shape_str(shape);
    int64_t count = t.numel();
    if (name == "embedding.weight") {
      if (q.vocab_size == 0) {
        std::printf("%-*s  %-16s %12s  %s\n", static_cast<int>(width), name.c_str(),
                    ("[V, " + std::to_string(dim) + "]").c_str(), "not counted",
                    "(V: --vocab-size or --run)");
        continue;
      }
      count = q.vocab_size * dim;  // both bounded above, no overflow
      shape_text = shape_str({q.vocab_size, dim});
    }
    const bool parameter = is_parameter(name);
    std::printf("%-*s  %-16s %12lld  %s\n", static_cast<int>(width), name.c_str(), shape_text.c_str(),
                static_cast<long long>(count), parameter ? "parameter" : "buffer");
    (parameter ? parameters : buffers) += count;
    if (parameter) part_parameters[part_of(name)] += count;
  }
  std::printf("\nencoder '%s', task %s, %lld classes, embedding width %lld, token dim %lld, sentence dim %lld\n",
              encoder_name(q.config).c_str(), task_name(q.task), static_cast<long long>(q.classes),
              static_cast<long long>(dim), static_cast<long long>(model.encoder().token_dim()),
              static_cast<long long>(model.encoder().sentence_dim()));
  for (const char* part : {"embedding", "encoder", "head"})
    std::printf("%-10s %12lld parameters%s\n", part, static_cast<long long>(part_parameters[part]),
                std::string(part) == "embedding" && q.vocab_size == 0 ? " (rows not counted: no --vocab-size)" : "");
  std::printf("total      %12lld parameters%s, %lld values in buffers\n", static_cast<long long>(parameters),
              q.vocab_size == 0 ? " without the embeddings" : " (the count `attn train` logs)",
              static_cast<long long>(buffers));
  return 0;
}

}  // namespace attn
