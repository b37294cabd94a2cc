#include "attn/train/cli/analysis_presets.h"

namespace attn {

namespace {

// The rows of the Multi-Scale Transformer paper's Table 4 our encoders cover;
// "+ Char + CRF" joins them with the CRF (model key crf).
struct Table4Column {
  const char* format;   // --format
  const char* name;     // the preset's suffix
  const char* dataset;  // the title's
  const char* metric;   // "test accuracy" or "test entity F1"
};

struct Table4Row {
  const char* encoder;
  const char* title;
  bool chars;
  const char* figures[3];  // PTB POS, CoNLL-2003, CoNLL-2012
};

const Table4Column kColumns[] = {
    {"ptb-pos", "ptb-pos", "PTB POS tagging", "test accuracy"},
    {"conll03", "conll03", "CoNLL-2003 NER", "test entity F1"},
    {"conll12", "conll12", "CoNLL-2012 NER", "test entity F1"},
};

const Table4Row kRows[] = {
    {"transformer", "Transformer", false, {"96.31", "86.48", "83.57"}},
    {"transformer", "Transformer + Char", true, {"97.04", "88.26", "85.14"}},
    {"mstrans", "Multi-Scale Transformer", false, {"97.24", "89.38", "85.26"}},
    {"mstrans", "Multi-Scale Transformer + Char", true, {"97.54", "91.33", "86.77"}},
};

// The settings mstrans-sst5 states for its encoder, which a Transformer row does not have.
Preset without_mstrans_keys(Preset p) {
  std::vector<PresetSetting> kept;
  for (const PresetSetting& s : p.settings)
    if (s.key != "model:alpha" && s.key != "model:scales" && s.key != "heads") kept.push_back(s);
  p.settings = kept;
  return p;
}

}  // namespace

// Each row is mstrans-sst5's training setup (Adam, the paper's only stated
// optimiser; the unstated values as that preset chose them) with Table 1's
// sequence-labelling settings.
std::vector<Preset> mstrans_sequence_labelling_presets(const std::vector<Preset>& made) {
  const Preset& sst5 = preset_named(made, "mstrans-sst5");
  const std::string source = "Multi-Scale Transformer paper, Sequence Labelling; Tables 1 and 4, row ";
  std::vector<Preset> rows;
  for (const Table4Row& row : kRows) {
    const std::string encoder = row.encoder;
    const Preset base = encoder == "mstrans" ? sst5 : without_mstrans_keys(sst5);
    for (size_t c = 0; c < 3; ++c) {
      const Table4Column& column = kColumns[c];
      std::vector<PresetSetting> changes = {
          {"task", "tag", ""},
          {"format", column.format, ""},
          {"model", encoder, ""},
          {"hidden", "300", "H DIM (Table 1)"},
          {"heads", "10", "head DIM 30 (Table 1): 300 / 30"},
          {"model:layers", "3", "unstated for sequence labelling: L = 3, as Table 6"},
      };
      if (encoder == "mstrans") {
        changes.push_back({"model:alpha", "1.0", "alpha (Table 1)"});
        changes.push_back({"model:scales", "1,3,5,7,9", "\"we use 1, 3, 5, 7, 9 for sequence labeling tasks\" (Table 1)"});
      }
      if (row.chars)
        changes.push_back({"model:char_cnn", "true",
                           "\"Char\" (Table 4): JMT's pre-trained character n-grams in the paper; here Ma and Hovy's "
                           "character CNN (docs/models.md)"});
      std::string name = encoder + "-" + column.name + (row.chars ? "-char" : "");
      rows.push_back(preset_variant(base, name, std::string(row.title) + " on " + column.dataset,
                                    source + "\"" + row.title + "\"",
                                    std::string(column.metric) + " " + row.figures[c], changes));
    }
  }
  return rows;
}

}  // namespace attn
