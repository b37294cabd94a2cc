#include "attn/train/bench/bench_options.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>

#include "attn/engine/error.h"
#include "attn/engine/random.h"
#include "attn/util/cli_args.h"
#include "attn/util/text.h"
#include "attn/models/encoder.h"
#include "attn/models/model_config_check.h"

namespace attn {

namespace {

const char* const kQuickLengths = "16,64,128";
constexpr int64_t kQuickBatch = 4;
constexpr int64_t kQuickReps = 2;
constexpr int64_t kQuickWarmup = 1;

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t at = text.find(sep, start);
    parts.push_back(text.substr(start, at == std::string::npos ? std::string::npos : at - start));
    if (at == std::string::npos) return parts;
    start = at + 1;
  }
}

using text::trim;

// A positive integer, or a UsageError naming the flag and the whole value.
int64_t positive_int(const std::string& piece, const std::string& flag, const std::string& whole,
                     const std::string& command) {
  char* end = nullptr;
  long long v = std::strtoll(piece.c_str(), &end, 10);
  if (piece.empty() || *end != '\0' || v < 1)
    throw UsageError(command + ": " + flag + " expects positive integers, got '" + piece + "' in '" + whole + "'");
  return v;
}

// --save-check describes one run of one encoder; anything that asks for more
// (or for timing output) is a usage error rather than silently ignored.
void check_save_check_settings(const BenchSettings& s) {
  const std::string flag = "attn bench: --save-check ";
  if (s.save_check_path.empty()) throw UsageError(flag + "needs a file name");
  if (s.models.size() != 1)
    throw UsageError(flag + "writes one model's check; give exactly one with --models (got " +
                     std::to_string(s.models.size()) + ")");
  if (s.modes.size() != 1) throw UsageError(flag + "writes one mode's check; give --mode infer or --mode train");
  if (s.lengths.size() != 1)
    throw UsageError(flag + "writes one length's check; give exactly one with --lengths (got " +
                     std::to_string(s.lengths.size()) + ")");
  if (s.device != Device::CPU) throw UsageError(flag + "runs on the CPU only (--device cpu)");
  if (s.profile) throw UsageError(flag + "and --profile do not go together");
  if (!s.csv_path.empty() || !s.svg_path.empty())
    throw UsageError(flag + "does not time anything; --csv and --svg do not go with it");
  if (s.random_lengths)
    throw UsageError(flag + "always pads (example 0 full length, the others random); drop --random-lengths");
}

}  // namespace

const char* bench_mode_name(BenchMode mode) { return mode == BenchMode::Infer ? "infer" : "train"; }

const std::vector<std::string>& default_bench_models() {
  static const std::vector<std::string> models = [] {
    std::vector<std::string> names;
    for (const EncoderInfo& info : encoder_registry())
      if (info.in_efficiency_study) names.push_back(info.name);
    return names;
  }();
  return models;
}

// Bounds that keep the list's own size and its loop finite: a range to
// 2^63 - 1 would otherwise fill memory (and n += step would wrap).
constexpr int64_t kMaxBenchLength = 65536;
constexpr size_t kMaxBenchLengths = 1024;

std::vector<int64_t> parse_length_list(const std::string& text, const std::string& flag, const std::string& command) {
  if (trim(text).empty()) throw UsageError(command + ": " + flag + " needs at least one length");
  std::vector<int64_t> out;
  auto bounded = [&](int64_t n) {
    if (n > kMaxBenchLength)
      throw UsageError(command + ": " + flag + " length " + std::to_string(n) + " is above the limit of " +
                       std::to_string(kMaxBenchLength) + " tokens");
    return n;
  };
  auto add = [&](int64_t n) {
    if (out.size() == kMaxBenchLengths)
      throw UsageError(command + ": " + flag + " '" + text + "' gives more than " + std::to_string(kMaxBenchLengths) +
                       " lengths");
    out.push_back(n);
  };
  for (const std::string& raw : split(text, ',')) {
    const std::string item = trim(raw);
    if (item.find(':') == std::string::npos) {
      add(bounded(positive_int(item, flag, text, command)));
      continue;
    }
    std::vector<std::string> r = split(item, ':');
    if (r.size() != 3)
      throw UsageError(command + ": " + flag + " range '" + item + "' must be START:STOP:STEP, e.g. 16:384:16");
    const int64_t start = bounded(positive_int(trim(r[0]), flag, text, command)),
                  stop = bounded(positive_int(trim(r[1]), flag, text, command)), step = positive_int(trim(r[2]), flag, text, command);
    if (stop < start)
      throw UsageError(command + ": " + flag + " range '" + item + "' ends before it starts");
    for (int64_t n = start; n <= stop; n += std::min(step, kMaxBenchLength + 1)) add(n);
  }
  for (size_t i = 1; i < out.size(); ++i)
    if (out[i] <= out[i - 1])
      throw UsageError(command + ": " + flag + " must be strictly increasing, got " + std::to_string(out[i - 1]) +
                       " then " + std::to_string(out[i]) + " in '" + text + "'");
  return out;
}

std::vector<std::string> parse_model_list(const std::string& text, const std::string& command) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const std::string& raw : split(text, ',')) {
    const std::string name = trim(raw);
    if (name.empty()) throw UsageError("attn bench: --models has an empty name in '" + text + "'");
    if (!seen.insert(name).second) throw UsageError("attn bench: --models names '" + name + "' twice");
    out.push_back(name);
  }
  return out;
}

int64_t parse_byte_size(const std::string& text, const std::string& flag, const std::string& command) {
  const std::string s = trim(text);
  char* end = nullptr;
  const double number = std::strtod(s.c_str(), &end);
  const std::string unit = trim(std::string(end ? end : ""));
  double scale = 0;
  if (unit.empty() || unit == "B") scale = 1;
  else if (unit == "KiB" || unit == "KB" || unit == "K") scale = 1024.0;
  else if (unit == "MiB" || unit == "MB" || unit == "M") scale = 1024.0 * 1024;
  else if (unit == "GiB" || unit == "GB" || unit == "G") scale = 1024.0 * 1024 * 1024;
  else if (unit == "TiB" || unit == "TB" || unit == "T") scale = 1024.0 * 1024 * 1024 * 1024;
  if (s.empty() || end == s.c_str() || scale == 0 || !std::isfinite(number) || number <= 0)
    throw UsageError(command + ": " + flag + " expects a positive size such as 8GiB, 512MiB or 1000000 (bytes), got '" +
                     text + "'");
  const double bytes = number * scale;
  if (bytes >= 9.0e18) throw UsageError(command + ": " + flag + " is too large: '" + text + "'");
  return static_cast<int64_t>(bytes);
}

std::vector<std::pair<std::string, std::string>> parse_config_overrides(const std::string& text) {
  const std::string command = "attn bench";
  std::vector<std::pair<std::string, std::string>> out;
  if (trim(text).empty()) return out;
  for (const std::string& raw : split(text, ',')) {
    const std::string item = trim(raw);
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
      throw UsageError("attn bench: --set expects KEY=VALUE pairs separated by commas, got '" + item + "'");
    out.emplace_back(trim(item.substr(0, eq)), trim(item.substr(eq + 1)));
  }
  return out;
}

std::vector<BenchMode> parse_mode_list(const std::string& text, const std::string& command) {
  if (text == "infer") return {BenchMode::Infer};
  if (text == "train") return {BenchMode::Train};
  if (text == "both") return {BenchMode::Infer, BenchMode::Train};
  throw UsageError(command + ": --mode must be infer, train or both, got '" + text + "'");
}

bool parse_bench_args(const std::vector<std::string>& args, BenchSettings* s, std::string* help) {
  ArgParser p("bench",
              "The papers' efficiency study: times every encoder on random inputs [batch, length, features]\n"
              "in inference (forward under NoGrad) and training (forward + backward of the summed outputs),\n"
              "and records the allocator's peak bytes per step. Table on stdout, progress on stderr.\n"
              "With --profile: one training step per model and length, time and bytes by kernel op, and on the\n"
              "CPU the step's floor: its GEMM FLOPs, fused-attention exps and other kernels' bytes at this\n"
              "machine's measured rates (train/bench/step_floor.h), against which the median of --reps\n"
              "unprofiled steps is also given, and each of those steps against the floor at the GEMM rate of a\n"
              "1024^3 product timed right after it (\"paired\": robust to the machine's speed changing).");
  std::string default_models;
  for (const std::string& name : default_bench_models()) default_models += (default_models.empty() ? "" : ",") + name;
  p.option("models", default_models, "comma list of encoders (any registered one)")
      .option("lengths", "16:384:16", "sequence lengths: a list 16,32,64 and/or ranges START:STOP:STEP (each at most 65536, "
              "at most 1024 in all)")
      .option("batch", "64", "examples per batch")
      .option("features", "300", "input features per token")
      .option("hidden", "", "override every encoder's `hidden` width (default: each encoder's own, 300)")
      .option("set", "", "extra encoder config keys KEY=VALUE[,KEY=VALUE] for every model, e.g. layers=3 "
                         "(a key a model does not read is an error)")
      .option("mode", "both", "infer, train or both")
      .option("device", "cpu", "cpu or cuda")
      .option("threads", "", "CPU threads (OpenMP; default: every core)")
      .option("reps", "5", "timed repetitions per point")
      .option("warmup", "1", "untimed repetitions before them")
      .option("csv", "", "write the results as CSV to this file (atomically, after every point)")
      .option("svg", "", "write time and memory charts as SVG to this file (atomically, after every point)")
      .option("mem-limit", "8GiB", "memory budget: a model stops at the first length whose predicted or measured "
                                   "peak exceeds it")
      .flag("quick", std::string("a short run: lengths ") + kQuickLengths + ", batch " + std::to_string(kQuickBatch) +
                         ", reps " + std::to_string(kQuickReps) + ", warmup " + std::to_string(kQuickWarmup) +
                         " (explicit flags win)")
      .flag("profile",
            "profile one training step per model and length by kernel op, then time --reps unprofiled ones "
            "(their median against the floor) (default mtsa, length 64)")
      .option("trace", "", "with --profile: write every kernel call of the profiled steps to this CSV file, in call "
                           "order (model, length, call, depth, op, self ms, bytes allocated, its tensors' "
                           "dtypes, shapes and strides); atomically, after every model and length")
      .flag("random-lengths", "random valid lengths in [1, length] per example instead of all-valid masks")
      .option("seed", "1", "seed of the inputs and the initialisation")
      .option("save-check", "", "instead of timing, write a numeric check of ONE model in ONE mode (infer or "
                                "train) at ONE length to this safetensors file: the encoder built in float64 "
                                "from --seed, its weights (param.NAME), a padded input batch (input.x, "
                                "input.mask), its outputs (output.tokens, output.sentence) and in train mode "
                                "the gradients of the bench loss (grad.input.x, grad.param.NAME); "
                                "scripts/bench_vs_torch.py compares PyTorch with it");
  p.example("attn bench --quick", "every encoder at lengths 16, 64 and 128, batch 4, 2 timed repetitions: a first look");
  p.example("attn bench --models mtsa,disan --lengths 64 --mode train --csv bench.csv", "two encoders' training step at one length, saved as CSV");
  if (!p.parse(args)) {
    *help = p.help();
    return false;
  }
  BenchSettings out;
  out.quick = p.is_set("quick");
  out.profile = p.is_set("profile");
  out.random_lengths = p.is_set("random-lengths");
  if (out.quick && out.profile) throw UsageError("attn bench: --quick and --profile do not go together");

  if (out.profile && !p.is_set("models")) out.models = {kDefaultEncoder};
  else out.models = parse_model_list(p.get("models"));
  std::string lengths = p.get("lengths");
  if (!p.is_set("lengths") && out.quick) lengths = kQuickLengths;
  if (!p.is_set("lengths") && out.profile) lengths = "64";
  out.lengths = parse_length_list(lengths);
  out.modes = parse_mode_list(p.get("mode"));

  // quick_value < 0: --quick leaves this option at its default.
  auto int_at_least = [&](const std::string& name, int64_t lo, int64_t quick_value) {
    if (out.quick && quick_value >= 0 && !p.is_set(name)) return quick_value;
    const int64_t v = p.get_int(name);
    if (v < lo)
      throw UsageError("attn bench: --" + name + " must be at least " + std::to_string(lo) + ", got " + p.get(name));
    return v;
  };
  out.batch = int_at_least("batch", 1, kQuickBatch);
  out.features = int_at_least("features", 1, -1);
  out.reps = int_at_least("reps", 1, kQuickReps);
  out.warmup = int_at_least("warmup", 0, kQuickWarmup);
  out.hidden = 0;
  if (!p.get("hidden").empty()) {
    out.hidden = p.get_int("hidden");
    if (out.hidden < 1) throw UsageError("attn bench: --hidden must be positive, got " + p.get("hidden"));
  }
  if (!p.get("threads").empty()) {
    out.threads = p.get_int("threads");
    if (out.threads < 1) throw UsageError("attn bench: --threads must be at least 1, got " + p.get("threads"));
  }
  out.config = parse_config_overrides(p.get("set"));
  const std::string device = p.get("device");
  if (device == "cpu") out.device = Device::CPU;
  else if (device == "cuda") out.device = Device::CUDA;
  else throw UsageError("attn bench: --device must be cpu or cuda, got '" + device + "'");
  out.trace_path = p.get("trace");
  if (!out.trace_path.empty() && !out.profile)
    throw UsageError("attn bench: --trace lists the kernel calls of --profile's step; add --profile");
  out.csv_path = p.get("csv");
  out.svg_path = p.get("svg");
  out.mem_limit_bytes = parse_byte_size(p.get("mem-limit"));
  const int64_t seed = p.get_int("seed");
  if (seed < 0) throw UsageError("attn bench: --seed must not be negative, got " + p.get("seed"));
  out.seed = static_cast<uint64_t>(seed);
  out.save_check_path = p.get("save-check");
  if (p.is_set("save-check")) check_save_check_settings(out);

  // Every name must be a registered encoder taking the --set keys: building a tiny one says so.
  for (const std::string& name : out.models) {
    Config config;
    config.set("encoder", name);
    for (const auto& [key, value] : out.config) config.set(key, value);
    Generator init(0), noise(1);
    try {
      check_model_config(config, "encoder '" + name + "' with --set");
      build_encoder(config, EncoderContext{4, DType::F32, &init, &noise});
      config.check_all_used("encoder '" + name + "' with --set");
    } catch (const Error& e) {
      throw UsageError(std::string("attn bench: --models: ") + e.user_message());
    }
  }
  *s = out;
  return true;
}

double memory_growth_exponent(const std::string& model, bool materialized_scores) {
  const EncoderInfo* info = find_encoder(model);
  if (!info) return 2.0;
  return materialized_scores ? info->memory_growth_materialized : info->memory_growth;
}

int64_t predict_peak_bytes(int64_t prev_length, int64_t prev_peak_bytes, int64_t length, double exponent) {
  if (prev_length <= 0 || prev_peak_bytes <= 0) return 0;
  const double ratio = static_cast<double>(length) / static_cast<double>(prev_length);
  const double predicted = static_cast<double>(prev_peak_bytes) * std::pow(ratio, exponent);
  return predicted >= 9.0e18 ? INT64_MAX : static_cast<int64_t>(std::ceil(predicted));
}

bool fits_memory_budget(int64_t predicted_peak_bytes, int64_t limit_bytes) {
  return predicted_peak_bytes <= limit_bytes;
}

std::string format_bytes(int64_t bytes) {
  char buf[64];
  const double b = static_cast<double>(bytes);
  if (std::llabs(bytes) >= (int64_t{1} << 30)) std::snprintf(buf, sizeof buf, "%.2f GiB", b / (1 << 30));
  else if (std::llabs(bytes) >= (int64_t{1} << 20)) std::snprintf(buf, sizeof buf, "%.1f MiB", b / (1 << 20));
  else if (std::llabs(bytes) >= 1024) std::snprintf(buf, sizeof buf, "%.1f KiB", b / 1024);
  else std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(bytes));
  return buf;
}

}  // namespace attn
