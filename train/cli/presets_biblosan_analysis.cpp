#include "attn/train/cli/analysis_presets.h"

namespace attn {

std::vector<Preset> biblosan_ablation_presets(const std::vector<Preset>& made) {
  (void)made;
  return {};
}

}  // namespace attn
