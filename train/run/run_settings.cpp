#include "attn/train/run/run_settings.h"

#include <cstdio>
#include <cstdlib>
#include <set>

#include "attn/engine/error.h"

namespace attn {

namespace {

std::string number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.17g", v);
  return buf;
}

std::string flag_of(const std::string& key) {
  std::string f = key;
  for (char& c : f)
    if (c == '_') c = '-';
  return "--" + f;
}

}  // namespace

DType training_dtype_from_name(const std::string& name) {
  if (name == "float32") return DType::F32;
  if (name == "float64") return DType::F64;
  throw Error("train: unknown dtype '" + name + "' (known: float32, float64)");
}

const std::vector<std::string>& run_setting_keys() {
  static const std::vector<std::string> keys = {
      "task", "data", "format", "fold", "max_len", "max_words", "batch", "optimizer", "lr", "seed", "min_count",
      "max_vocab", "weight_decay", "weight_decay_scope", "weight_decay_factor", "clip", "glove", "rl_reward",
      "rl_lambda", "rl_warmup", "rl_warmup_min_decrease", "rl_only", "rl_lr", "rl_baseline", "preset", "dtype"};
  return keys;
}

Config run_settings(const TrainOptions& o) {
  Config c;
  c.set("task", task_name(o.data.task));
  c.set("data", o.data.data);
  c.set("format", o.data.format);
  c.set("fold", std::to_string(o.data.fold));
  c.set("max_len", std::to_string(o.max_len));
  c.set("max_words", std::to_string(o.data.max_words));
  c.set("batch", std::to_string(o.batch_size));
  c.set("optimizer", o.optimizer);
  c.set("lr", number(o.lr));
  c.set("seed", std::to_string(o.seed));
  c.set("min_count", std::to_string(o.min_count));
  c.set("max_vocab", std::to_string(o.max_vocab));
  c.set("weight_decay", number(o.weight_decay));
  c.set("weight_decay_scope", o.weight_decay_scope);
  c.set("weight_decay_factor", number(o.weight_decay_factor));
  c.set("clip", number(o.clip_norm));
  c.set("glove", o.glove);
  c.set("rl_reward", reward_kind_name(o.rl_reward));
  c.set("rl_lambda", number(o.rl_lambda));
  c.set("rl_warmup", o.rl_warmup_steps == TrainOptions::kWarmupByDevLoss ? "dev-loss" : std::to_string(o.rl_warmup_steps));
  c.set("rl_warmup_min_decrease", number(o.rl_warmup_min_decrease));
  c.set("rl_only", std::to_string(o.rl_only_steps));
  c.set("rl_lr", number(o.rl_lr));
  c.set("rl_baseline", o.rl_baseline ? "1" : "0");
  if (!o.preset.empty()) c.set("preset", o.preset);
  c.set("dtype", dtype_name(o.dtype));
  return c;
}

void apply_run_settings(const Config& stored, TrainOptions& o, const std::function<bool(const std::string&)>& keep) {
  auto take = [&](const std::string& key) { return stored.has(key) && !keep(key); };
  auto text = [&](const std::string& key) { return stored.get(key, ""); };
  auto integer = [&](const std::string& key) {
    const std::string s = text(key);
    char* end = nullptr;
    const long long v = std::strtoll(s.c_str(), &end, 10);
    ATTN_CHECK(!s.empty() && *end == '\0', "train", "run.cfg: '", key, "' is not an integer: '", s, "'");
    return static_cast<int64_t>(v);
  };
  auto real = [&](const std::string& key) {
    const std::string s = text(key);
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    ATTN_CHECK(!s.empty() && *end == '\0', "train", "run.cfg: '", key, "' is not a number: '", s, "'");
    return v;
  };
  if (take("task")) o.data.task = task_from_name(text("task"));
  if (take("data")) o.data.data = text("data");
  if (take("format")) o.data.format = text("format");
  if (take("fold")) o.data.fold = integer("fold");
  if (take("max_len")) o.max_len = integer("max_len");
  if (take("max_words")) o.data.max_words = integer("max_words");
  if (take("batch")) o.batch_size = integer("batch");
  if (take("optimizer")) o.optimizer = text("optimizer");
  if (take("lr")) o.lr = real("lr");
  if (take("seed")) o.seed = static_cast<uint64_t>(std::strtoull(text("seed").c_str(), nullptr, 10));
  if (take("min_count")) o.min_count = integer("min_count");
  if (take("max_vocab")) o.max_vocab = integer("max_vocab");
  if (take("weight_decay")) o.weight_decay = real("weight_decay");
  if (take("weight_decay_scope")) o.weight_decay_scope = text("weight_decay_scope");
  if (take("weight_decay_factor")) o.weight_decay_factor = real("weight_decay_factor");
  if (take("clip")) o.clip_norm = real("clip");
  if (take("glove")) o.glove = text("glove");
  if (take("rl_reward")) o.rl_reward = reward_kind_from_name(text("rl_reward"));
  if (take("rl_lambda")) o.rl_lambda = real("rl_lambda");
  if (take("rl_warmup"))
    o.rl_warmup_steps = text("rl_warmup") == "dev-loss" ? TrainOptions::kWarmupByDevLoss : integer("rl_warmup");
  if (take("rl_warmup_min_decrease")) o.rl_warmup_min_decrease = real("rl_warmup_min_decrease");
  if (take("rl_only")) o.rl_only_steps = integer("rl_only");
  if (take("rl_lr")) o.rl_lr = real("rl_lr");
  if (take("rl_baseline")) o.rl_baseline = text("rl_baseline") == "1";
  if (take("preset")) o.preset = text("preset");
  if (take("dtype")) o.dtype = training_dtype_from_name(text("dtype"));
}

std::vector<std::string> run_differences(const Config& stored_run, const Config& stored_model, const TrainOptions& o) {
  std::vector<std::string> out;
  const Config now = run_settings(o);
  for (const std::string& key : run_setting_keys())
    if (stored_run.has(key) && stored_run.get(key, "") != now.get(key, ""))
      out.push_back(flag_of(key) + ": the run has '" + stored_run.get(key, "") + "', now '" + now.get(key, "") + "'");
  std::set<std::string> keys;
  for (const auto& [k, v] : stored_model.entries()) keys.insert(k);
  for (const auto& [k, v] : o.model.entries()) keys.insert(k);
  for (const std::string& k : keys) {
    const std::string was = stored_model.has(k) ? "'" + stored_model.get(k, "") + "'" : "(unset)";
    const std::string is = o.model.has(k) ? "'" + o.model.get(k, "") + "'" : "(unset)";
    if (was != is) out.push_back("model " + k + ": the run has " + was + ", now " + is);
  }
  return out;
}

}  // namespace attn
