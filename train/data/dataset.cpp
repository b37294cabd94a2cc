#include "attn/train/data/dataset.h"

#include <algorithm>
#include <cmath>

#include "attn/engine/error.h"
#include "attn/engine/random.h"

namespace attn {

std::vector<bool> held_out(size_t n, double fraction, uint64_t seed) {
  ATTN_CHECK(fraction >= 0 && fraction < 1, "split_off", "fraction must be in [0, 1), got ", fraction);
  size_t take = static_cast<size_t>(std::llround(fraction * static_cast<double>(n)));
  if (take == 0 && fraction > 0 && n >= 2) take = 1;
  // Partial Fisher-Yates over positions: the first `take` picks are held out.
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  Generator gen(seed);
  for (size_t i = 0; i < take; ++i) {
    size_t j = i + static_cast<size_t>(gen.next_u64() % (n - i));
    std::swap(order[i], order[j]);
  }
  std::vector<bool> held(n, false);
  for (size_t i = 0; i < take; ++i) held[order[i]] = true;
  return held;
}

std::vector<Example> split_off(std::vector<Example>& train, double fraction, uint64_t seed) {
  const size_t n = train.size();
  const std::vector<bool> held = held_out(n, fraction, seed);
  std::vector<Example> kept, out;
  for (size_t i = 0; i < n; ++i) (held[i] ? out : kept).push_back(std::move(train[i]));
  train = std::move(kept);
  return out;
}

namespace {
std::string reported_sizes(const Dataset& data) {
  std::string out;
  for (const NamedSplit& s : data.reported) out += ", " + s.name + " " + std::to_string(s.examples.size());
  return out;
}
}  // namespace

std::string dataset_summary(const Dataset& data) {
  return data.name + ": " + task_name(data.task) + ", " + std::to_string(data.label_names.size()) + " labels, train " +
         std::to_string(data.train.size()) + ", dev " + std::to_string(data.dev.size()) + ", test " +
         std::to_string(data.test.size()) + reported_sizes(data) +
         (data.notes.empty() ? "" : "; " + data.notes);
}

const std::vector<Example>* find_split(const Dataset& data, const std::string& name) {
  if (name == "train") return &data.train;
  if (name == "dev") return &data.dev;
  if (name == "test") return &data.test;
  for (const NamedSplit& s : data.reported)
    if (s.name == name) return &s.examples;
  return nullptr;
}

std::string split_names(const Dataset& data) {
  std::string out = "train, dev, test";
  for (const NamedSplit& s : data.reported) out += ", " + s.name;
  return out;
}

}  // namespace attn
