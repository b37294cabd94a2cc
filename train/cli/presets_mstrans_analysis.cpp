#include "attn/train/cli/analysis_presets.h"

namespace attn {

// Table 6 of the Multi-Scale Transformer paper: rows A-E vary alpha of Eq. 11
// over the five candidate scales; rows F-I give every head of every layer one
// fixed scale ("the same number of layers and attention heads with
// Multi-scale Transformer, but their scales are fixed").
std::vector<Preset> mstrans_scale_presets(const std::vector<Preset>& made) {
  const Preset& base = preset_named(made, "mstrans-snli");
  const std::string source = "Multi-Scale Transformer paper, Analysis (Influence of Scale Distributions; "
                             "Multi-Scale vs. Single-Scale); Table 6, row ";
  std::vector<Preset> rows;
  struct MultiScaleRow {
    const char* letter;
    const char* alpha;
    const char* accuracy;
  };
  for (const MultiScaleRow& r : {MultiScaleRow{"a", "1", "85.5"}, MultiScaleRow{"b", "0.5", "85.9"},
                                 MultiScaleRow{"c", "0", "84.9"}, MultiScaleRow{"d", "-0.5", "84.7"},
                                 MultiScaleRow{"e", "-1", "84.3"}}) {
    const std::string letter = r.letter;
    const std::string upper(1, static_cast<char>(letter[0] - 'a' + 'A'));
    rows.push_back(preset_variant(
        base, "mstrans-snli-" + letter, "Multi-Scale Transformer, Table 6 row " + upper + " (alpha " + r.alpha + ") on SNLI",
        source + upper, std::string("test accuracy ") + r.accuracy,
        {{"model:alpha", r.alpha, "alpha of Eq. 11 (Table 6, row " + upper + ")"},
         {"model:scales", "1,3,n/16,n/8,n/4", "\"The five candidates of scale size are 1, 3, N/16, N/8, N/4\" (Table 6)"},
         {"model:layers", "3", "L (Table 6)"},
         {"heads", "5", "N' (Table 6)"}}));
  }
  struct SingleScaleRow {
    const char* letter;
    const char* scale;
    const char* shown;
    const char* accuracy;
  };
  for (const SingleScaleRow& r : {SingleScaleRow{"f", "3", "3", "84.3"}, SingleScaleRow{"g", "n/16", "N/16", "83.9"},
                                  SingleScaleRow{"h", "n/8", "N/8", "81.7"}, SingleScaleRow{"i", "n/4", "N/4", "80.7"}}) {
    const std::string letter = r.letter;
    const std::string upper(1, static_cast<char>(letter[0] - 'a' + 'A'));
    rows.push_back(preset_variant(
        base, "mstrans-snli-" + letter,
        std::string("Multi-Scale Transformer, Table 6 row ") + upper + " (single scale " + r.shown + ") on SNLI",
        source + upper, std::string("test accuracy ") + r.accuracy,
        {{"model:scales", r.scale, std::string("omega = ") + r.shown + " for every head (Table 6, row " + upper + ")"},
         {"model:layers", "3", "L (Table 6)"},
         {"heads", "5", "as the multi-scale rows: \"the same number of layers and attention heads\""},
         {"model:alpha", "0", "no effect with one scale: every head takes it"}}));
  }
  return rows;
}

}  // namespace attn
