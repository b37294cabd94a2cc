// The papers' analyses as presets: every ablation row and every row of a
// scale study is its table's main preset with a few settings changed.
// Each paper's table lives in its own file (presets_<paper>_analysis.cpp);
// presets.cpp appends them after the main rows they derive from.
#pragma once
#include <string>
#include <vector>

#include "attn/train/cli/presets.h"

namespace attn {

// The main preset named `base` among `made` (a logic error if it is not there:
// the analysis tables are built after the rows they change).
const Preset& preset_named(const std::vector<Preset>& made, const std::string& base);

// `base` with `changes` applied: a change replaces the setting of the same
// key, or is appended when the base has none. Name, title, source and result
// are the row's own.
Preset preset_variant(const Preset& base, std::string name, std::string title, std::string source,
                      std::string result, const std::vector<PresetSetting>& changes);

// MTSA paper Table 3 (SNLI ablations).
std::vector<Preset> mtsa_ablation_presets(const std::vector<Preset>& made);
// Bi-BloSAN paper Table 3 (SNLI ablations).
std::vector<Preset> biblosan_ablation_presets(const std::vector<Preset>& made);
// ReSAN paper Table 2 (SNLI ablations) and Table 4 (iterative sampling).
std::vector<Preset> resan_ablation_presets(const std::vector<Preset>& made);
// MTSA paper Table 4 (SRL on CoNLL-05): deepatt with multi-head or MTSA attention.
std::vector<Preset> srl_presets();
// Bi-BloSAN paper Table 4 (every context fusion on SQuAD sentence location).
std::vector<Preset> biblosan_squad_presets(const std::vector<Preset>& made);
// Multi-Scale Transformer paper Table 6 (scale distributions on SNLI, rows A-I).
std::vector<Preset> mstrans_scale_presets(const std::vector<Preset>& made);
// Multi-Scale Transformer paper Table 4 (sequence labelling): Transformer and
// Multi-Scale Transformer, plain and "+ Char", on PTB POS, CoNLL-2003 and
// CoNLL-2012 NER (presets_mstrans_seqlab.cpp).
std::vector<Preset> mstrans_sequence_labelling_presets(const std::vector<Preset>& made);

}  // namespace attn
