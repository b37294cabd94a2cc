#include "attn/train/reinforce/selection_policy.h"

#include "attn/engine/error.h"

namespace attn {

namespace {
constexpr const char* kKey = "selection_policy";
}

std::map<std::string, std::string> selection_policy_metadata(const Encoder& encoder) {
  if (!encoder.has_selection_policy()) return {};
  return {{kKey, encoder.select_all() ? "select_all" : "learned"}};
}

void apply_selection_policy(Encoder& encoder, const std::map<std::string, std::string>& metadata,
                            const std::string& path) {
  if (!encoder.has_selection_policy()) return;
  const auto it = metadata.find(kKey);
  const std::string mode = it == metadata.end() ? "learned" : it->second;
  ATTN_CHECK(mode == "select_all" || mode == "learned", "run", "'", path, "': unknown ", kKey, " '", mode,
             "' (known: select_all, learned)");
  encoder.set_select_all(mode == "select_all");
}

}  // namespace attn
