#include "attn/train/cli/analysis_presets.h"

namespace attn {

// Table 2 of the ReSAN paper: "each component is removed and the changes in
// test accuracy are recorded" (Sec. 5.1); the ReSAN row is resan-snli. And
// Table 4 (appendix A): ReSAN with iterative sampling in place of RSS.
// Rows without hard attention have no selection policy: the base's --rl-*
// settings then have nothing to train, and the trainer runs no REINFORCE.
std::vector<Preset> resan_ablation_presets(const std::vector<Preset>& made) {
  const Preset& base = preset_named(made, "resan-snli");
  const std::string table2 = "ReSAN paper, Sec. 5.1 (ablation study); Table 2, row ";
  struct AblationRow {
    const char* name;     // the preset's suffix
    const char* row;      // Table 2's row
    const char* variant;  // resa_variant
    const char* accuracy;
    const char* note;
  };
  const AblationRow rows[] = {
      {"no-unselected-heads", "ReSAN w/o unselected heads", "no_unselected_heads", "86.1",
       "\"only applies the soft self-attention to the selected head and dependent tokens\" (Sec. 3.3)"},
      {"no-dependency-restricted", "ReSAN w/o dependency restricted", "shared_rss", "85.6",
       "\"use only one RSS to select tokens for both heads and dependents\" (Sec. 3.3)"},
      {"no-hard-attention", "ReSAN w/o hard attention", "no_hard_attention", "86.0",
       "\"remove 1) the hard attention module\": no RSS, every token selected (Sec. 5.1)"},
      {"no-soft-self-attention", "ReSAN w/o soft self-attention", "no_soft_self_attention", "83.4",
       "\"2) soft self-attention module\": one RSS selects the tokens source2token reads (Sec. 5.1; "
       "docs/models.md, ReSAN)"},
      {"no-attentions", "ReSAN w/o all attentions", "no_attentions", "83.1",
       "\"3) both hard attention and soft self-attention modules\": the mean of the embeddings (Sec. 5.1; "
       "docs/models.md, ReSAN)"},
  };
  std::vector<Preset> out;
  for (const AblationRow& r : rows)
    out.push_back(preset_variant(base, std::string("resan-snli-") + r.name, std::string(r.row) + " on SNLI",
                                 table2 + "\"" + r.row + "\"", std::string("test accuracy ") + r.accuracy,
                                 {{"model:resa_variant", r.variant, r.note}}));
  out.push_back(preset_variant(
      base, "resan-snli-iterative", "ReSAN with iterative sampling on SNLI",
      "ReSAN paper, appendix A (A Comparison to a Iterative Sampling), Eqs. 21-25; Table 4",
      "test accuracy 86.2 (train 92.3); 4.0m parameters against RSS's 3.1m",
      {{"model:rss_kind", "iterative",
        "\"we implement the iteration-based sequence sampling method following Lei et al. [2016]\" (appendix A)"}}));
  return out;
}

}  // namespace attn
