#include "attn/train/cli/analysis_presets.h"

namespace attn {

// Table 3 of the MTSA paper: "An ablation study of MTSA on SNLI", each row
// `mtsa-snli` with one part removed (models/mtsa.h, key `ablation`; the masks
// by head_masks). What takes a removed part's place is in docs/models.md.
std::vector<Preset> mtsa_ablation_presets(const std::vector<Preset>& made) {
  const Preset& base = preset_named(made, "mtsa-snli");
  const std::string source = "MTSA paper, Sec. 4 (\"An ablation study of MTSA is shown in Table 3\"); Table 3, row ";
  struct Row {
    const char* suffix;
    const char* paper_row;
    const char* key;
    const char* value;
    const char* note;
    const char* accuracy;
  };
  const Row rows[] = {
      {"no-masks", "MTSA w/o fw&bw masks", "model:head_masks", "none",
       "every key but the query itself in both heads: the released code's mask without direction", "85.3"},
      {"no-token2token", "MTSA w/o token2token", "model:ablation", "no_token2token",
       "Eq. 10 without sigma_t(f_t): no q, k (Eq. 8); the masks stay", "85.8"},
      {"no-source2token", "MTSA w/o source2token", "model:ablation", "no_source2token",
       "Eq. 10 without sigma_s(f_s): no S (Eq. 9)", "84.9"},
      {"no-proposed-modules", "MTSA w/o proposed modules", "model:ablation", "no_proposed_modules",
       "no attention and no gate: v, then the source2token readout (1.8m of Table 3)", "84.3"},
  };
  std::vector<Preset> out;
  for (const Row& r : rows)
    out.push_back(preset_variant(base, std::string("mtsa-snli-") + r.suffix, std::string(r.paper_row) + " on SNLI",
                                 source + "\"" + r.paper_row + "\"", std::string("test accuracy ") + r.accuracy,
                                 {{r.key, r.value, std::string(r.note) + " (Table 3)"}}));
  return out;
}

}  // namespace attn
