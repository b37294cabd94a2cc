#include "attn/train/cli/analysis_presets.h"

namespace attn {

// Table 3 of the Bi-BloSAN paper: "An ablation study of Bi-BloSAN", each row
// `biblosan-snli` with one part removed (models/biblosan.h, key `ablation`).
// The caption defines the rows; docs/models.md gives what each removes.
std::vector<Preset> biblosan_ablation_presets(const std::vector<Preset>& made) {
  const Preset& base = preset_named(made, "biblosan-snli");
  const std::string source = "Bi-BloSAN paper, Sec. 4.1 (\"we conduct an ablation study of Bi-BloSAN in Table 3\"); "
                             "Table 3, row ";
  struct Row {
    const char* suffix;
    const char* paper_row;
    const char* value;
    const char* note;
    const char* accuracy;
  };
  const Row rows[] = {
      {"no-local", "Bi-BloSAN w/o Local", "no_local",
       "\"Local\" denotes the local context representations h: the fusion gate takes [x; E]", "85.2"},
      {"no-global", "Bi-BloSAN w/o Global", "no_global",
       "\"Global\" denotes the global context representations E: no block stages, the fusion gate takes [x; h]",
       "85.3"},
      {"no-mblosa", "Bi-BloSAN w/o mBloSA", "no_mblosa",
       "\"equals to word embeddings directly followed by a source2token attention\"", "83.1"},
      {"no-mblosa-no-s2t", "Bi-BloSAN w/o mBloSA & source2token self-attn.", "no_mblosa_no_s2t",
       "\"equals to word embeddings plus a vanilla attention without q\"", "79.8"},
  };
  std::vector<Preset> out;
  for (const Row& r : rows)
    out.push_back(preset_variant(base, std::string("biblosan-snli-") + r.suffix, std::string(r.paper_row) + " on SNLI",
                                 source + "\"" + r.paper_row + "\"", std::string("test accuracy ") + r.accuracy,
                                 {{"model:ablation", r.value, std::string(r.note) + " (Table 3)"}}));
  return out;
}

}  // namespace attn
