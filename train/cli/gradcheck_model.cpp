#include "attn/train/cli/gradcheck_model.h"

#include <cstdio>

#include "attn/engine/cuda/cuda_backend.h"
#include "attn/engine/error.h"
#include "attn/models/encoder.h"
#include "attn/train/cli/commands.h"
#include "attn/train/model_gradcheck.h"

namespace attn {

namespace {

const std::vector<std::string> kHeads = {"classify", "pair", "relatedness", "tag", "srl", "locate"};

// Prints the model's rows (with --verbose), failures and summary line; true when it passed.
bool report(const std::string& what, const ModuleGradcheckResult& m, bool verbose) {
  const SampledGradcheckResult& r = m.result;
  if (verbose) {
    size_t width = 9;
    for (const std::string& n : m.names) width = std::max(width, n.size());
    std::printf("%-*s  %-14s %8s %12s %12s %12s  %s\n", static_cast<int>(width), "parameter", "shape", "elements",
                "max |grad|", "max abs err", "max rel err", "result");
    for (size_t i = 0; i < r.inputs.size(); ++i) {
      const GradcheckInputReport& in = r.inputs[i];
      std::printf("%-*s  %-14s %8lld %12.3e %12.3e %12.3e  %s\n", static_cast<int>(width), m.names[i].c_str(),
                  shape_str(in.shape).c_str(), static_cast<long long>(in.checked), in.max_abs_gradient,
                  in.max_abs_error, in.max_rel_error, in.passed ? "pass" : "FAIL");
    }
  }
  int failed = 0;
  const GradcheckInputReport* worst = nullptr;
  for (const GradcheckInputReport& in : r.inputs) {
    if (in.passed) continue;
    ++failed;
    std::printf("    %s\n", in.failure.c_str());
    if (in.checked > 0 && (!worst || in.worst.excess > worst->worst.excess)) worst = &in;
  }
  std::string unused;
  for (size_t i = 0; i < r.inputs.size(); ++i)
    if (!r.inputs[i].reached && r.inputs[i].passed) unused += (unused.empty() ? "" : ", ") + m.names[i];
  if (!unused.empty())
    std::printf("    not used by this head's loss (no gradient; central differences zero too): %s\n", unused.c_str());
  if (!m.skipped.empty()) {
    std::string names;
    for (const std::string& n : m.skipped) names += (names.empty() ? "" : ", ") + n;
    std::printf("    not checked (a selection policy trained by REINFORCE; the loss does not reach it): %s\n",
                names.c_str());
  }
  if (r.inputs.empty() || (!r.passed && failed == 0)) std::printf("    %s\n", r.failure.c_str());
  std::printf("gradcheck: model %s, %zu tensors, %lld elements, max abs err %.1e, %d failed\n", what.c_str(),
              r.inputs.size(), static_cast<long long>(r.checked), r.max_abs_error,
              failed + (r.passed || failed > 0 ? 0 : 1));
  if (worst) std::printf("    worst element: %s\n", describe_element(*worst, worst->worst).c_str());
  return r.passed;
}

// Whether the config's encoder has a selection policy trained by REINFORCE
// (built small to ask it).
bool has_selection_policy(const Config& config) {
  Generator gen(1);
  EncoderContext c;
  c.input_dim = 4;
  c.init = &gen;
  c.noise = &gen;
  return build_encoder(config, c)->has_selection_policy();
}

}  // namespace

void add_model_gradcheck_options(ArgParser& p) {
  p.option("model", "", "NAME: check the whole model of this encoder with a task head, or 'all': " + encoder_choices())
      .option("config", "", "PATH: check the model of this model config file (as `attn params --model FILE` reads)")
      .option("head", "classify", "the task head: classify, pair, relatedness (SICK) or tag")
      .option("samples", "8", "elements checked per parameter tensor (all of a smaller one)")
      .option("seed", "1", "initialisation, batch and sample")
      .option("width", "4", "embedding width; the head has 4 * width hidden units (--model)")
      .option("hidden", "4", "encoder width: hidden, filters (--model)")
      .option("heads", "2", "attention heads, where the encoder has them (--model)")
      .option("tokens", "8", "tokens of the longest sentence; the batch has 3, one half as long, one empty")
      .option("vocab", "8", "word embedding rows")
      .option("classes", "3", "classes of the classify, pair and tag heads (relatedness: the config's K)")
      .option("eps", "1e-6",
              "FLOAT: the central-difference step (a kink's error shrinks with it, a wrong backward's does not)")
      .option("atol", "1e-8", "FLOAT: an element fails when |analytic - numeric| > atol + rtol * |numeric|")
      .option("rtol", "1e-4", "FLOAT: see --atol")
      .option("device", "cpu", "cpu or cuda");
}

int run_model_gradcheck(const ArgParser& p) {
  if (p.is_set("model") == p.is_set("config"))
    throw UsageError("attn gradcheck: give one of --model NAME and --config FILE");
  for (const char* flag : {"op", "list"})
    if (p.is_set(flag))
      throw UsageError(std::string("attn gradcheck: --") + flag + " checks ops; drop it with --model or --config");
  if (p.is_set("config"))
    for (const char* flag : {"width", "hidden", "heads"})
      if (p.is_set(flag))
        throw UsageError(std::string("attn gradcheck: --") + flag + " sizes a --model; a --config file has its own");
  ModelGradcheckSpec spec;
  spec.task = task_from_name(p.get_choice("head", kHeads));
  spec.samples = p.get_int("samples", 1, 1 << 20);
  spec.seed = p.get_uint64("seed");
  spec.tokens = p.get_int("tokens", 2, 4096);
  spec.vocab = p.get_int("vocab", 2, 1 << 20);
  spec.classes = p.get_int("classes", 2, 1 << 20);
  const int64_t width = p.get_int("width", 1, 4096), hidden = p.get_int("hidden", 1, 4096),
                heads = p.get_int("heads", 1, 4096);
  spec.tolerance.eps = p.get_double("eps", 1e-12, 1.0);
  spec.tolerance.atol = p.get_double("atol", 0.0, 1.0);
  spec.tolerance.rtol = p.get_double("rtol", 0.0, 1.0);
  const std::string device_name = p.get_choice("device", {"cpu", "cuda"});

  std::vector<std::pair<std::string, Config>> models;  // what to call it, its config
  if (p.is_set("config")) {
    models.push_back({p.get("config"), Config::load(p.get("config"))});
  } else if (p.get("model") == "all") {
    for (const EncoderInfo& info : encoder_registry()) {
      Config config = small_model_config(info.name, width, hidden, heads);
      if (spec.task == TaskKind::Locate && has_selection_policy(config)) {
        std::printf("gradcheck: model %s/locate skipped: the locate task refuses an encoder with a selection policy\n",
                    info.name);
        continue;
      }
      models.push_back({info.name, config});
    }
  } else {
    if (!find_encoder(p.get("model")))
      throw UsageError("attn gradcheck: no encoder named '" + p.get("model") + "' (known: " + encoder_choices() +
                       ", or all)");
    models.push_back({p.get("model"), small_model_config(p.get("model"), width, hidden, heads)});
  }
  // The srl head's predicate embedding at the small width too: at its default
  // 100 beside 10 deepatt layers of 800 relu units, some unit lies within a
  // step of its kink and central differences fail the point, not the backward.
  if (spec.task == TaskKind::Srl && !p.is_set("config"))
    for (auto& named : models) named.second.set("predicate_dim", std::to_string(width));
  spec.device = parse_device(device_name, "gradcheck");  // after the usage checks, before any work

  int failed = 0;
  for (auto& [name, config] : models) {
    spec.config = config;
    const std::string what = name + "/" + task_name(spec.task);
    ModuleGradcheckResult m;
    try {
      m = gradcheck_task_model(spec);
    } catch (const Error& e) {
      if (models.size() == 1) throw;  // a bad config or size: the error is the whole answer
      std::printf("    %s\ngradcheck: model %s failed to run\n", e.what(), what.c_str());
      ++failed;
      continue;
    }
    failed += report(what, m, p.is_set("verbose")) ? 0 : 1;
  }
  if (models.size() > 1) std::printf("gradcheck: %zu models, %d failed\n", models.size(), failed);
  return failed == 0 ? 0 : 1;
}

}  // namespace attn
