// `attn graph`: builds a model (an encoder by name at a small width, or a
// model config), runs one training-mode forward on a padded batch and writes
// its autograd graph as Graphviz DOT (engine/graph_dot.h), and as SVG beside
// it when Graphviz's `dot` is installed. --trace prints every kernel of that
// forward and of one backward pass as it runs (engine/kernel_trace.h).
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "attn/engine/error.h"
#include "attn/engine/kernel_trace.h"
#include "attn/models/encoder.h"
#include "attn/models/model_config_check.h"
#include "attn/models/task_model.h"
#include "attn/nn/graph_names.h"
#include "attn/engine/copy.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/train/cli/commands.h"
#include "attn/train/cli/model_commands.h"
#include "attn/util/atomic_file.h"
#include "attn/util/cli_args.h"
#include "attn/util/text.h"

extern char** environ;

namespace attn {

namespace {

constexpr int64_t kVocabulary = 16;  // word ids of the made-up batch: 1..15, 0 is padding

// `program` found as an executable file in a folder of PATH.
bool on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return false;
  std::string folders = path;
  size_t start = 0;
  while (start <= folders.size()) {
    size_t end = folders.find(':', start);
    if (end == std::string::npos) end = folders.size();
    const std::string folder = end > start ? folders.substr(start, end - start) : ".";
    const std::string candidate = folder + "/" + program;
    struct stat info {};
    if (stat(candidate.c_str(), &info) == 0 && S_ISREG(info.st_mode) && access(candidate.c_str(), X_OK) == 0)
      return true;
    start = end + 1;
  }
  return false;
}

// Renders `dot_path` to `svg_path` with Graphviz (no shell: the paths are
// passed as they are), into a temporary file renamed over the target.
void render_svg(const std::string& dot_path, const std::string& svg_path) {
  const std::string temporary = svg_path + ".tmp";
  std::vector<std::string> words{"dot", "-Tsvg", "-o", temporary, dot_path};
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  ATTN_CHECK(posix_spawnp(&pid, "dot", nullptr, nullptr, argv.data(), environ) == 0, "attn graph",
             "could not start Graphviz's dot");
  int status = 0;
  ATTN_CHECK(waitpid(pid, &status, 0) == pid, "attn graph", "lost Graphviz's dot while it ran");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::remove(temporary.c_str());
    throw Error("attn graph: Graphviz's dot failed on '" + dot_path + "' (exit status " +
                std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ")");
  }
  ATTN_CHECK(std::rename(temporary.c_str(), svg_path.c_str()) == 0, "attn graph", "cannot write '", svg_path, "'");
}

// graph.dot -> graph.svg; any other name gets ".svg" appended.
std::string svg_path_for(const std::string& dot_path) {
  const std::string suffix = ".dot";
  if (dot_path.size() > suffix.size() && dot_path.compare(dot_path.size() - suffix.size(), suffix.size(), suffix) == 0)
    return dot_path.substr(0, dot_path.size() - suffix.size()) + ".svg";
  return dot_path + ".svg";
}

// B sentences of n tokens, sentence b holding max(1, n - b) words and padding
// after them, so that the graph includes the masking a real batch needs.
void fill_batch(int64_t batch, int64_t length, Tensor& ids, Tensor& mask) {
  std::vector<int64_t> id_values, mask_values;
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t words = std::max<int64_t>(1, length - b);
    for (int64_t i = 0; i < length; ++i) {
      const bool word = i < words;
      id_values.push_back(word ? 1 + (b * length + i) % (kVocabulary - 1) : 0);
      mask_values.push_back(word ? 1 : 0);
    }
  }
  ids = from_indices(id_values, {batch, length});
  mask = cast(from_indices(mask_values, {batch, length}), DType::U8);
}

}  // namespace

int run_graph_command(const std::vector<std::string>& args) {
  ArgParser p("graph",
              "Runs one training-mode forward of a model on a padded batch and writes its autograd graph as\n"
              "Graphviz DOT: a box per recorded op (op, output shape and dtype, the tensors its backward saved\n"
              "and their bytes), the parameters as named leaves, and the bytes saved for backward in all.\n"
              "With Graphviz's `dot` installed the SVG is written beside it. Encoders:\n" +
                  encoder_summaries());
  p.option("model", "", "an encoder name (built at --dim), or a model config file: " + encoder_choices())
      .option("head", "classify", "classify, pair, relatedness or tag (the task head)")
      .option("classes", "2", "classes of the head (classify, pair, tag; relatedness takes the config's)")
      .option("dim", "20",
              "INT: width of the embeddings, of the encoder (its `hidden`, multicnn's `filters`) and of the head's "
              "MLP; a config file keeps its own widths unless given")
      .option("batch", "2", "sentences in the batch")
      .option("length", "6", "tokens per sentence; sentence b has max(1, length - b) words, then padding")
      .option("out", "graph.dot", "PATH: the DOT file (written atomically); the SVG goes beside it")
      .flag("trace", "print every kernel of the forward and of one backward pass: op, device, shapes, time");
  p.example("attn graph --model mtsa", "MTSA's graph in graph.dot (and graph.svg with Graphviz)");
  p.example("attn graph --model bisru --trace --out /tmp/bisru.dot", "BiSRU's graph, and every kernel it runs");
  if (!p.parse(args)) {
    std::cout << p.help();
    return 0;
  }
  if (!p.is_set("model")) throw UsageError("attn graph: give --model NAME (" + encoder_choices() + ") or a config file");
  const std::string source = p.get("model");
  const TaskKind task = task_from_name(p.get_choice("head", {"classify", "pair", "relatedness", "tag"}));
  const int64_t dim = p.get_int("dim", 1, 4096);
  const int64_t batch = p.get_int("batch", 1, 1024);
  const int64_t length = p.get_int("length", 1, 4096);
  const std::string out = p.get("out");
  check_output_file("--out", out, {});
  // Refused before the model is built, not after the forward.
  const size_t slash = out.rfind('/');
  const std::string folder = slash == std::string::npos ? "." : slash == 0 ? "/" : out.substr(0, slash);
  if (!is_directory(folder)) throw Error("--out: the folder '" + folder + "' of '" + out + "' does not exist");
  const std::string svg = svg_path_for(out);
  check_output_file("the SVG beside --out", svg, {out});

  Config config;
  const bool by_name = find_encoder(source) != nullptr && !text::is_regular_file(source);
  if (by_name) {
    config.set("encoder", source);
  } else {
    if (!text::is_regular_file(source))
      throw UsageError("attn graph: --model '" + source + "' is neither an encoder (" + encoder_choices() +
                       ") nor a config file");
    config = Config::load(source);
  }
  if (by_name || p.is_set("dim")) {
    config.set("embedding_dim", std::to_string(dim));
    config.set("head_hidden", std::to_string(dim));
    // The encoder's own width: `hidden`, or multicnn's feature maps per n-gram width.
    for (const char* width : {"hidden", "filters"})
      if (find_encoder(encoder_name(config))->config_keys().find(width) != nullptr)
        config.set(width, std::to_string(dim));
  }
  check_model_config(config, "the model '" + source + "'");
  const int64_t classes = task == TaskKind::Relatedness ? relatedness_classes(config) : p.get_int("classes", 2, 4096);

  Generator init(1), noise(2);
  TaskModel model(config, task, kVocabulary, classes, DType::F32, init, noise);
  config.check_all_used("the model '" + source + "'");
  TaskInputs inputs;
  fill_batch(batch, length, inputs.ids, inputs.mask);
  if (task == TaskKind::Pair || task == TaskKind::Relatedness) fill_batch(batch, length, inputs.ids_b, inputs.mask_b);

  Tensor logits;
  {
    std::unique_ptr<KernelTrace> trace;
    if (p.is_set("trace")) {
      std::cout << "kernels of the forward pass:\n";
      trace = std::make_unique<KernelTrace>(std::cout);
    }
    logits = model.logits(inputs);
  }
  const GraphDot graph = graph_dot(logits, model);
  write_file_atomically(out, graph.dot);
  if (p.is_set("trace")) {
    std::cout << "kernels of the backward pass (of the sum of the logits):\n";
    KernelTrace trace(std::cout);
    sum(logits).backward();
  }

  const GraphSummary& s = graph.summary;
  std::printf("encoder '%s', head %s, batch %lld x %lld tokens: %s\n", encoder_name(config).c_str(), task_name(task),
              static_cast<long long>(batch), static_cast<long long>(length), shape_str(logits.shape()).c_str());
  std::printf("graph: %lld ops, %lld edges, %lld leaves (%lld named parameters)\n", static_cast<long long>(s.ops),
              static_cast<long long>(s.edges), static_cast<long long>(s.leaves),
              static_cast<long long>(s.named_leaves));
  std::printf("saved for backward: %lld bytes in %lld buffers (%lld of them the parameters' own, %lld activations)\n",
              static_cast<long long>(s.saved_bytes), static_cast<long long>(s.saved_buffers),
              static_cast<long long>(s.saved_leaf_bytes), static_cast<long long>(s.saved_bytes - s.saved_leaf_bytes));
  std::printf("wrote %s\n", out.c_str());
  if (on_path("dot")) {
    render_svg(out, svg);
    std::printf("wrote %s\n", svg.c_str());
  } else {
    std::printf("no SVG: Graphviz's `dot` is not on PATH (optional; to install it: apt-get install -y graphviz)\n");
  }
  return 0;
}

}  // namespace attn
