// Presets for the data sets whose rows derive from a main preset of the same
// model on another data set (train/cli/presets.cpp): the same training setup,
// the paper's figure of the new table. Built after the main rows, like the
// analyses (train/cli/analysis_presets.h, whose helpers they use).
#pragma once
#include <string>
#include <vector>

#include "attn/train/cli/presets.h"

namespace attn {

// MTSA paper Table 2, the MultiNLI columns (rows "Transfer + MTSA" and
// "Transfer + Multi-Head").
std::vector<Preset> multinli_presets(const std::vector<Preset>& made);
// Multi-Scale Transformer paper Table 3: MS-Trans and Transformer on each of
// the sixteen MTL-16 data sets.
std::vector<Preset> mtl16_presets(const std::vector<Preset>& made);
std::vector<Preset> translation_presets(const std::vector<Preset>& made);

// `preset` without the settings of the given keys (a variant for another
// encoder drops the keys only the base's encoder has).
Preset without_settings(Preset preset, const std::vector<std::string>& keys);

}  // namespace attn
