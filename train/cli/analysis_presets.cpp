#include "attn/train/cli/analysis_presets.h"

#include <stdexcept>

namespace attn {

const Preset& preset_named(const std::vector<Preset>& made, const std::string& base) {
  for (const Preset& p : made)
    if (p.name == base) return p;
  throw std::logic_error("analysis preset built before its base preset '" + base + "'");
}

Preset preset_variant(const Preset& base, std::string name, std::string title, std::string source,
                      std::string result, const std::vector<PresetSetting>& changes) {
  Preset p = base;
  p.name = std::move(name);
  p.title = std::move(title);
  p.source = std::move(source);
  p.result = std::move(result);
  for (const PresetSetting& change : changes) {
    bool replaced = false;
    for (PresetSetting& s : p.settings)
      if (s.key == change.key) {
        s = change;
        replaced = true;
      }
    if (!replaced) p.settings.push_back(change);
  }
  return p;
}

}  // namespace attn
