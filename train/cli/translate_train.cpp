#include "attn/train/cli/translate_train.h"

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <set>

#include "attn/engine/error.h"
#include "attn/train/cli/presets.h"
#include "attn/train/translation_run.h"
#include "attn/util/text.h"

namespace attn {

const std::vector<std::string>& translate_only_options() {
  static const std::vector<std::string> names = {"src", "tgt", "bpe-merges", "warmup", "beam", "alpha"};
  return names;
}

int run_translate_training(const ArgParser& p, const std::vector<std::string>& args, const Config& preset_model,
                           const std::string& preset) {
  // Every other flag belongs to the classification trainer: refused, never ignored.
  static const std::set<std::string> allowed = {
      "preset", "task", "data", "format", "model", "config", "hidden", "heads", "device", "batch", "lr", "seed",
      "max-len", "max-steps", "eval-every", "log-every", "run", "overwrite", "quiet",
      "src", "tgt", "bpe-merges", "warmup", "beam", "alpha"};
  for (const std::string& a : args) {
    if (a.rfind("--", 0) != 0) continue;
    const std::string name = a.substr(2, a.find('=') == std::string::npos ? std::string::npos : a.find('=') - 2);
    if (!allowed.count(name))
      throw UsageError("attn train: --" + name + " does not apply to --task translate (it takes --data, --format, "
                       "--src, --tgt, --bpe-merges, --model, --config, --hidden, --heads, --batch, --lr, --warmup, "
                       "--max-steps, --max-len, --eval-every, --log-every, --beam, --alpha, --seed, --run, "
                       "--overwrite, --quiet; docs/training.md, \"Translation\")");
  }
  const bool preset_given = !preset.empty();
  if (const Preset* named = find_preset(preset))
    for (const PresetSetting& setting : named->settings)
      if (setting.key == "task" && setting.value != "translate")
        throw UsageError("attn train: --preset " + preset + " is a " + setting.value +
                         " experiment; --task translate takes the translation presets (`attn presets` lists them: "
                         "*-wmt14-setup1, *-wmt14-setup2)");
  auto given = [&](const std::string& flag) { return p.is_set(flag) || preset_given; };
  if (p.get("device") != "cpu")
    throw UsageError("attn train: --task translate trains on the CPU only (--device cpu), got --device " +
                     p.get("device"));
  TranslationRunOptions o;
  o.preset = preset;
  o.data = p.get("data");
  if (o.data.empty()) throw UsageError("attn train: --task translate needs --data DIR (parallel text, docs/data.md)");
  if (!std::filesystem::is_directory(o.data))
    throw UsageError("attn train: --data '" + o.data + "' is not a folder (translate reads train/dev/test files in one)");
  o.format = p.get("format") == "auto" ? "parallel" : p.get("format");
  if (o.format != "parallel" && o.format != "wmt14")
    throw UsageError("attn train: --task translate reads --format parallel or wmt14 (the same files; "
                     "docs/data.md), got '" + o.format + "'");
  o.src = p.get("src");
  o.tgt = p.get("tgt");
  for (const std::string* code : {&o.src, &o.tgt})
    for (char c : *code)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_')
        throw UsageError("attn train: --src/--tgt " + text::quote(*code) + " is not a language code");
  if (o.src == o.tgt) throw UsageError("attn train: --src and --tgt are both '" + o.src + "'");
  o.bpe_merges = p.get_int("bpe-merges", 0, 10000000);
  // --model picks the encoder's self-attention; --config and the preset give the other keys.
  Config model = preset_model;
  if (p.is_set("config")) {
    if (!text::is_regular_file(p.get("config")))
      throw UsageError("attn train: --config '" + p.get("config") + "' is not a readable file");
    const Config given = Config::load(p.get("config"));
    for (const auto& [key, value] : given.entries()) model.set(key, value);
  }
  const std::string model_name = p.get("model").empty() ? "transformer" : p.get("model");
  if (model_name != "transformer" && model_name != "mtsa")
    throw UsageError("attn train: --task translate takes --model transformer (multi-head encoder self-attention) "
                     "or mtsa, got '" + model_name + "'");
  if (p.is_set("model") || !model.has("encoder_attention"))
    model.set("encoder_attention", model_name == "mtsa" ? "mtsa" : "multi_head");
  for (const char* key : {"hidden", "heads"})
    if (p.is_set(key)) model.set(key, std::to_string(p.get_int(key, 1)));
  o.model = model;
  // --batch counts tokens here (t2t's batch_size), not sentences.
  o.batch_tokens = given("batch") ? p.get_int("batch", 1) : 2048;
  o.learning_rate = p.get_double("lr", 0);
  if (o.learning_rate == 0) o.learning_rate = 0.2;
  o.warmup_steps = p.get_int("warmup", 1);
  o.max_len = given("max-len") ? p.get_int("max-len", 1) : 256;
  o.steps = p.get_int("max-steps", 0);
  if (o.steps == 0) throw UsageError("attn train: --task translate needs --max-steps N (N > 0): it trains by steps");
  o.eval_every = p.get_int("eval-every", 0);
  o.log_every = p.get_int("log-every", 0);
  o.test_search.beam_size = p.get_int("beam", 1, 64);
  o.test_search.alpha = p.get_double("alpha", 0, 10);
  o.seed = p.get_uint64("seed");
  o.overwrite = p.is_set("overwrite");
  o.verbose = !p.is_set("quiet");
  o.run_dir = p.get("run").empty() ? "runs/" + model_name + "-translate" : p.get("run");
  const TranslationRunResult r = run_translation_training(o);
  if (r.interrupted) return 130;
  std::printf("%s\n", r.test_json.c_str());
  return 0;
}

}  // namespace attn
