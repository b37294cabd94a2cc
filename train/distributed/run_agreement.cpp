#include "attn/train/distributed/run_agreement.h"

#include <sstream>

#include "attn/util/error.h"

namespace attn {

Fingerprint& Fingerprint::add(const void* data, size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < bytes; ++i) {
    hash_ ^= p[i];
    hash_ *= 0x100000001B3ULL;
  }
  return *this;
}

Fingerprint& Fingerprint::add(const std::string& text) {
  add(static_cast<int64_t>(text.size()));
  return add(text.data(), text.size());
}

uint64_t fingerprint_of(const std::vector<Example>& examples) {
  Fingerprint f;
  f.add(static_cast<int64_t>(examples.size()));
  for (const Example& e : examples) {
    for (const auto* words : {&e.tokens, &e.tokens_b}) {
      f.add(static_cast<int64_t>(words->size()));
      for (const std::string& w : *words) f.add(w);
    }
    f.add(static_cast<int64_t>(e.passage.size()));
    for (const auto& sentence : e.passage) {
      f.add(static_cast<int64_t>(sentence.size()));
      for (const std::string& w : sentence) f.add(w);
    }
    f.add(e.label).add(e.score).add(static_cast<int64_t>(e.tags.size()));
    for (int64_t tag : e.tags) f.add(tag);
  }
  return f.value();
}

uint64_t fingerprint_of(const std::vector<std::string>& words) {
  Fingerprint f;
  f.add(static_cast<int64_t>(words.size()));
  for (const std::string& w : words) f.add(w);
  return f.value();
}

uint64_t fingerprint_of(const std::vector<std::pair<std::string, Tensor>>& named) {
  Fingerprint f;
  for (const auto& [name, tensor] : named) {
    f.add(name);
    for (int64_t extent : tensor.shape()) f.add(extent);
    const std::vector<double> values = tensor.to_vector();
    f.add(values.data(), values.size() * sizeof(double));
  }
  return f.value();
}

void check_processes_agree(Communicator& processes, const std::vector<std::pair<std::string, uint64_t>>& items) {
  std::ostringstream differences;
  for (const auto& [what, value] : items) {
    const std::vector<uint64_t> all = processes.gather_to_all(value, "start-up check");
    std::vector<int> differing;
    for (int r = 1; r < static_cast<int>(all.size()); ++r)
      if (all[static_cast<size_t>(r)] != all[0]) differing.push_back(r);
    if (differing.empty()) continue;
    differences << (differences.tellp() > 0 ? "; " : "") << what << (differing.size() == 1 ? " (process" : " (processes");
    for (size_t i = 0; i < differing.size(); ++i) differences << (i ? ", " : " ") << differing[i];
    differences << (differing.size() == 1 ? " differs" : " differ") << " from process 0)";
  }
  ATTN_CHECK(differences.tellp() == 0, "train", "the ", processes.size(),
             " processes of this data-parallel run do not agree on: ", differences.str(),
             ". Every process must be started with the same command line, data files and run folder");
}

}  // namespace attn
