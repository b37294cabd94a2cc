// The papers' experiments as one-command presets: `attn train --preset NAME
// --data DIR [--glove FILE]` sets every hyper-parameter of one experiment as
// its paper states it. A value the paper does not state is still set (a run
// needs one), and its note says "unstated" and why we chose it. Explicit
// flags override a preset; `attn presets` lists them with their sources.
// docs/reproduction.md has the paper's number, the data and the command for each.
#pragma once
#include <string>
#include <vector>

#include "attn/util/cli_args.h"
#include "attn/models/config.h"

namespace attn {

struct PresetSetting {
  std::string key;    // an `attn train` option ("lr") or "model:<config key>"
  std::string value;
  std::string note;   // where the paper says it, or "unstated: ..." and what we use
};

struct Preset {
  std::string name;    // "mtsa-snli"
  std::string title;   // "MTSA on SNLI"
  std::string source;  // paper, section and table
  std::string result;  // the paper's reported test figure
  std::vector<PresetSetting> settings;
};

// Every preset, in the papers' order.
const std::vector<Preset>& all_presets();
const Preset* find_preset(const std::string& name);

// `attn presets` (or `attn train --preset list`): which paper each short name
// means, then one block per preset with its source, result and settings.
std::string presets_listing();
// `attn presets NAME`: the same block for one preset (UsageError if unknown).
std::string preset_listing(const std::string& name);

// Makes the preset's options the parser's defaults (flags given on the
// command line still win) and returns its model config keys. Throws
// UsageError for an unknown name, listing the known ones.
Config apply_preset(const std::string& name, ArgParser& parser);

}  // namespace attn
