#include "train/checkpoint.h"

#include <cstdlib>
#include <sstream>

#include "engine/error.h"
#include "nn/safetensors.h"

namespace attn {

namespace {

constexpr const char* kFormat = "attn-training-checkpoint-1";

std::string state_text(const std::array<uint64_t, 4>& s) {
  std::ostringstream os;
  os << s[0] << "," << s[1] << "," << s[2] << "," << s[3];
  return os.str();
}

std::array<uint64_t, 4> parse_state(const std::string& text, const std::string& path) {
  std::array<uint64_t, 4> s{};
  std::istringstream in(text);
  std::string part;
  for (int i = 0; i < 4; ++i) {
    ATTN_CHECK(std::getline(in, part, ','), "checkpoint", "'", path, "': malformed generator state '", text, "'");
    s[i] = std::strtoull(part.c_str(), nullptr, 10);
  }
  return s;
}

const std::string& meta(const std::map<std::string, std::string>& m, const std::string& key, const std::string& path) {
  auto it = m.find(key);
  ATTN_CHECK(it != m.end(), "checkpoint", "'", path, "' lacks metadata '", key, "'");
  return it->second;
}

std::string number(double v) {
  std::ostringstream os;
  os.precision(17);
  os << v;
  return os.str();
}

}  // namespace

void save_training_checkpoint(const std::string& path, const Module& model,
                              const std::vector<const Optimizer*>& optimizers, const TrainProgress& p) {
  std::vector<std::pair<std::string, Tensor>> tensors;
  for (auto& [name, t] : model.named_state()) tensors.emplace_back("model." + name, t);
  for (size_t k = 0; k < optimizers.size(); ++k)
    for (auto& [name, t] : optimizers[k]->state()) tensors.emplace_back("optim" + std::to_string(k) + "." + name, t);
  std::map<std::string, std::string> m = {
      {"format", kFormat},
      {"epoch", std::to_string(p.epoch)},
      {"batch_in_epoch", std::to_string(p.batch_in_epoch)},
      {"step", std::to_string(p.step)},
      {"best_dev", number(p.best_dev)},
      {"best_step", std::to_string(p.best_step)},
      {"epoch_shuffle_state", state_text(p.epoch_shuffle_state)},
      {"noise_state", state_text(p.noise_state)},
      {"baseline", number(p.baseline)},
      {"optimizers", std::to_string(optimizers.size())},
  };
  save_safetensors(path, tensors, m);
}

TrainProgress load_training_checkpoint(const std::string& path, Module& model,
                                       const std::vector<Optimizer*>& optimizers) {
  std::map<std::string, std::string> m;
  std::map<std::string, Tensor> all = load_safetensors(path, &m);
  ATTN_CHECK(m.count("format") && m.at("format") == kFormat, "checkpoint", "'", path,
             "' is not an attn training checkpoint");
  ATTN_CHECK(std::stoll(meta(m, "optimizers", path)) == static_cast<int64_t>(optimizers.size()), "checkpoint", "'",
             path, "' holds ", meta(m, "optimizers", path), " optimiser states, this run has ", optimizers.size());
  std::map<std::string, Tensor> model_state;
  std::vector<NamedTensors> optim_state(optimizers.size());
  for (auto& [name, t] : all) {
    if (name.rfind("model.", 0) == 0) {
      model_state.emplace(name.substr(6), t);
      continue;
    }
    size_t dot = name.find('.');
    ATTN_CHECK(name.rfind("optim", 0) == 0 && dot != std::string::npos, "checkpoint", "'", path,
               "' has an unexpected tensor '", name, "'");
    size_t k = std::stoul(name.substr(5, dot - 5));
    ATTN_CHECK(k < optimizers.size(), "checkpoint", "'", path, "' has state for optimiser ", k);
    optim_state[k].emplace_back(name.substr(dot + 1), t);
  }
  try {
    load_into_module(model, model_state, true);
  } catch (const Error& e) {
    throw Error("checkpoint: '" + path + "' does not fit this model (was it written with another model config?): " +
                e.what());
  }
  for (size_t k = 0; k < optimizers.size(); ++k) optimizers[k]->load_state(optim_state[k]);

  TrainProgress p;
  p.epoch = std::stoll(meta(m, "epoch", path));
  p.batch_in_epoch = std::stoll(meta(m, "batch_in_epoch", path));
  p.step = std::stoll(meta(m, "step", path));
  p.best_dev = std::strtod(meta(m, "best_dev", path).c_str(), nullptr);
  p.best_step = std::stoll(meta(m, "best_step", path));
  p.epoch_shuffle_state = parse_state(meta(m, "epoch_shuffle_state", path), path);
  p.noise_state = parse_state(meta(m, "noise_state", path), path);
  p.baseline = std::strtod(meta(m, "baseline", path).c_str(), nullptr);
  return p;
}

std::map<std::string, Tensor> load_model_weights(const std::string& path) {
  std::map<std::string, std::string> m;
  std::map<std::string, Tensor> all = load_safetensors(path, &m);
  if (!m.count("format") || m.at("format") != kFormat) return all;
  std::map<std::string, Tensor> model_state;
  for (auto& [name, t] : all)
    if (name.rfind("model.", 0) == 0) model_state.emplace(name.substr(6), t);
  return model_state;
}

}  // namespace attn
