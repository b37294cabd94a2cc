#include "attn/train/checkpoint.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "attn/engine/autograd.h"
#include "attn/engine/error.h"
#include "attn/engine/copy.h"
#include "attn/models/task_model.h"
#include "attn/nn/safetensors.h"
#include "attn/train/finite_check.h"
#include "attn/train/reinforce/selection_policy.h"

namespace attn {

namespace {

constexpr const char* kFormat = "attn-training-checkpoint-1";
// The data checksum's metadata key, and the key of the checksum written
// before 2026-11-28 (legacy_checksum_of), which files that carry it are still
// verified with.
constexpr const char* kChecksumKey = "data_checksum_4x64";
constexpr const char* kLegacyChecksumKey = "data_checksum";

std::string state_text(const std::array<uint64_t, 4>& s) {
  std::ostringstream os;
  os << s[0] << "," << s[1] << "," << s[2] << "," << s[3];
  return os.str();
}

// Metadata values are parsed strictly: the whole text, in range, or an
// error naming the field (never a std::stoll exception).
int64_t parse_int(const std::string& text, const std::string& key, const std::string& path) {
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  ATTN_CHECK(!text.empty() && *end == '\0' && errno != ERANGE && !std::isspace(static_cast<unsigned char>(text[0])),
             "checkpoint", "'", path, "': metadata '", key, "' is not an integer: '", text.substr(0, 40), "'");
  return v;
}

double parse_real(const std::string& text, const std::string& key, const std::string& path) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  ATTN_CHECK(!text.empty() && *end == '\0' && !std::isspace(static_cast<unsigned char>(text[0])), "checkpoint", "'",
             path, "': metadata '", key, "' is not a number: '", text.substr(0, 40), "'");
  return v;
}

std::array<uint64_t, 4> parse_state(const std::string& text, const std::string& key, const std::string& path) {
  std::array<uint64_t, 4> s{};
  std::istringstream in(text);
  std::string part;
  for (int i = 0; i < 4; ++i) {
    ATTN_CHECK(std::getline(in, part, ','), "checkpoint", "'", path, "': malformed generator state '", key, "'");
    char* end = nullptr;
    errno = 0;
    s[i] = std::strtoull(part.c_str(), &end, 10);
    ATTN_CHECK(!part.empty() && std::isdigit(static_cast<unsigned char>(part[0])) && *end == '\0' && errno != ERANGE,
               "checkpoint", "'", path, "': malformed generator state '", key, "'");
  }
  ATTN_CHECK(in.peek() == EOF, "checkpoint", "'", path, "': malformed generator state '", key,
             "' (more than 4 words)");
  ATTN_CHECK(s[0] | s[1] | s[2] | s[3], "checkpoint", "'", path, "': generator state '", key,
             "' is all zeros (not a state a generator can be in)");
  return s;
}

constexpr uint64_t kFnvOffset = 1469598103934665603ull, kFnvPrime = 1099511628211ull;

// Calls mix(data, bytes) on each tensor's name, dtype, shape and bytes, in
// name order.
template <class Mix>
void mix_tensors(const std::map<std::string, Tensor>& tensors, const Mix& mix) {
  NoGrad no_grad;
  for (const auto& [name, t] : tensors) {
    mix(name.data(), name.size() + 1);
    const int dtype = static_cast<int>(t.dtype());
    mix(&dtype, sizeof dtype);
    for (int64_t d : t.shape()) mix(&d, sizeof d);
    Tensor c = contiguous(t.device() == Device::CPU ? t.detach() : to_device(t.detach(), Device::CPU));
    if (c.numel() > 0) mix(c.raw_data(), static_cast<size_t>(c.numel()) * dtype_size(c.dtype()));
  }
}

// FNV-1a byte by byte over mix_tensors' bytes (data_checksum): one multiply
// after another, about 0.4 GB/s, a quarter of a second per 100 MB
// checkpoint.
uint64_t legacy_checksum_of(const std::map<std::string, Tensor>& tensors) {
  uint64_t h = kFnvOffset;
  mix_tensors(tensors, [&](const void* data, size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * kFnvPrime;
  });
  return h;
}

// FNV-1a's step on 64-bit little-endian words in four interleaved lanes
// (word i of a 32-byte block goes to lane i; a run's last bytes one by one
// to lane 0), the lanes then folded by byte-wise FNV-1a: four independent
// multiply chains, about ten times the byte-wise speed. Each step is a
// bijection of its lane for a given word, so a file differing in one word
// always differs in its checksum.
uint64_t checksum_of(const std::map<std::string, Tensor>& tensors) {
  uint64_t lane[4] = {kFnvOffset, kFnvOffset ^ 1, kFnvOffset ^ 2, kFnvOffset ^ 3};
  mix_tensors(tensors, [&](const void* data, size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
      uint64_t w[4];
      std::memcpy(w, p + i, sizeof w);
      for (int j = 0; j < 4; ++j) lane[j] = (lane[j] ^ w[j]) * kFnvPrime;
    }
    for (; i < n; ++i) lane[0] = (lane[0] ^ p[i]) * kFnvPrime;
  });
  uint64_t h = kFnvOffset;
  const auto* bytes = reinterpret_cast<const unsigned char*>(lane);
  for (size_t i = 0; i < sizeof lane; ++i) h = (h ^ bytes[i]) * kFnvPrime;
  return h;
}

void verify_checksum(const std::map<std::string, Tensor>& tensors, const std::map<std::string, std::string>& m,
                     const std::string& path) {
  bool current = true;
  auto it = m.find(kChecksumKey);
  if (it == m.end()) {
    current = false;
    it = m.find(kLegacyChecksumKey);
  }
  if (it == m.end()) return;  // written before checksums existed
  const uint64_t actual = current ? checksum_of(tensors) : legacy_checksum_of(tensors);
  ATTN_CHECK(it->second == std::to_string(actual), "checkpoint", "'", path,
             "': the data does not match its checksum (the file is corrupted)");
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
  // A checkpoint never receives a NaN: a run resumed from it could not recover.
  require_finite(tensors, "checkpoint: saving '" + path + "'");
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
      {"train_loss_sum", number(p.train_loss_sum)},
      {"train_loss_count", std::to_string(p.train_loss_count)},
      {"warmup_end_step", std::to_string(p.warmup_end_step)},
      {"warmup_dev_loss", number(p.warmup_dev_loss)},
  };
  m[kChecksumKey] = std::to_string(checksum_of({tensors.begin(), tensors.end()}));
  save_safetensors(path, tensors, m);
}

TrainProgress load_training_checkpoint(const std::string& path, Module& model,
                                       const std::vector<Optimizer*>& optimizers) {
  std::map<std::string, std::string> m;
  std::map<std::string, Tensor> all = load_safetensors(path, &m);
  ATTN_CHECK(m.count("format") && m.at("format") == kFormat, "checkpoint", "'", path,
             "' is not an attn training checkpoint");
  verify_checksum(all, m, path);
  ATTN_CHECK(parse_int(meta(m, "optimizers", path), "optimizers", path) == static_cast<int64_t>(optimizers.size()), "checkpoint", "'",
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
    const std::string index = name.substr(5, dot - 5);
    ATTN_CHECK(!index.empty() && index.size() < 6 && index.find_first_not_of("0123456789") == std::string::npos,
               "checkpoint", "'", path, "' has an unexpected tensor '", name.substr(0, 80), "'");
    const size_t k = static_cast<size_t>(std::stoul(index));
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
  auto integer = [&](const char* key) { return parse_int(meta(m, key, path), key, path); };
  auto real = [&](const char* key) { return parse_real(meta(m, key, path), key, path); };
  p.epoch = integer("epoch");
  p.batch_in_epoch = integer("batch_in_epoch");
  p.step = integer("step");
  p.best_dev = real("best_dev");
  p.best_step = integer("best_step");
  p.epoch_shuffle_state = parse_state(meta(m, "epoch_shuffle_state", path), "epoch_shuffle_state", path);
  p.noise_state = parse_state(meta(m, "noise_state", path), "noise_state", path);
  p.baseline = real("baseline");
  if (m.count("train_loss_sum")) p.train_loss_sum = real("train_loss_sum");
  if (m.count("train_loss_count")) p.train_loss_count = integer("train_loss_count");
  if (m.count("warmup_end_step")) p.warmup_end_step = integer("warmup_end_step");
  if (m.count("warmup_dev_loss")) p.warmup_dev_loss = real("warmup_dev_loss");
  // Checks that need no knowledge of the run.
  ATTN_CHECK(p.epoch >= 0 && p.batch_in_epoch >= 0 && p.step >= 0, "checkpoint", "'", path,
             "': negative epoch, batch_in_epoch or step");
  ATTN_CHECK(p.best_step >= -1 && p.best_step <= p.step, "checkpoint", "'", path, "': best_step ", p.best_step,
             " is not within [-1, step ", p.step, "]");
  ATTN_CHECK(p.best_step < 0 ? p.best_dev == -std::numeric_limits<double>::infinity() : std::isfinite(p.best_dev),
             "checkpoint", "'", path, "': best_dev ", p.best_dev, " does not fit best_step ", p.best_step);
  ATTN_CHECK(p.warmup_end_step >= -1 && p.warmup_end_step <= p.step, "checkpoint", "'", path,
             "': warmup_end_step ", p.warmup_end_step, " is not within [-1, step ", p.step, "]");
  ATTN_CHECK(!std::isnan(p.warmup_dev_loss) && p.warmup_dev_loss >= 0, "checkpoint", "'", path,
             "': warmup_dev_loss ", p.warmup_dev_loss, " is not a loss");
  ATTN_CHECK(std::isfinite(p.baseline), "checkpoint", "'", path, "': baseline ", p.baseline, " is not finite");
  ATTN_CHECK(std::isfinite(p.train_loss_sum) && p.train_loss_count >= 0 && p.train_loss_count <= p.step,
             "checkpoint", "'", path, "': the running training loss (", p.train_loss_sum, " over ",
             p.train_loss_count, " steps) is invalid");
  return p;
}

void check_progress_fits_run(const TrainProgress& p, int64_t batches_per_epoch, int64_t epochs,
                             const std::string& path) {
  ATTN_CHECK(p.epoch <= epochs, "checkpoint", "'", path, "': the checkpoint is in epoch ", p.epoch + 1,
             " but the run has --epochs ", epochs);
  ATTN_CHECK(p.batch_in_epoch < batches_per_epoch || (p.batch_in_epoch == 0 && batches_per_epoch == 0), "checkpoint",
             "'", path, "': batch_in_epoch ", p.batch_in_epoch, " is beyond the ", batches_per_epoch,
             " batches of an epoch");
  ATTN_CHECK(p.epoch <= INT64_MAX / std::max<int64_t>(batches_per_epoch, 1) &&
                 p.step == p.epoch * batches_per_epoch + p.batch_in_epoch,
             "checkpoint", "'", path, "': step ", p.step, " does not match epoch ", p.epoch, " and batch ",
             p.batch_in_epoch, " with ", batches_per_epoch, " batches per epoch");
}

void save_model_weights(const std::string& path, const NamedTensors& state, std::map<std::string, std::string> m) {
  m[kChecksumKey] = std::to_string(checksum_of({state.begin(), state.end()}));
  save_safetensors(path, state, m);
}

std::map<std::string, Tensor> load_model_weights(const std::string& path,
                                                 std::map<std::string, std::string>* metadata) {
  std::map<std::string, std::string> m;
  std::map<std::string, Tensor> all = load_safetensors(path, &m);
  if (metadata) *metadata = m;
  verify_checksum(all, m, path);
  if (!m.count("format") || m.at("format") != kFormat) return all;
  std::map<std::string, Tensor> model_state;
  for (auto& [name, t] : all)
    if (name.rfind("model.", 0) == 0) model_state.emplace(name.substr(6), t);
  return model_state;
}

void save_best_weights(const std::string& path, TaskModel& model, int64_t step) {
  const auto state = model.named_state();
  require_finite(state, "train: saving '" + path + "'");
  std::map<std::string, std::string> metadata = selection_policy_metadata(model.encoder());
  metadata["step"] = std::to_string(step);
  save_model_weights(path, state, metadata);
}

void load_best_weights(const std::string& path, TaskModel& model) {
  std::map<std::string, std::string> metadata;
  load_into_module(model, load_model_weights(path, &metadata), true);
  apply_selection_policy(model.encoder(), metadata, path);
}

}  // namespace attn
