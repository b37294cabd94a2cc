#include "attn/train/cli/analysis_presets.h"

#include <algorithm>

namespace attn {

// Table 4 of the Bi-BloSAN paper: every context fusion in the sentence
// locator of App. B (Fig. 7) on SQuAD turned into sentence location. Each row
// is that encoder's SNLI preset (the paper: "network parameters and word
// embeddings initialization methods are same as those for SNLI") with the
// settings of Sec. 4.2 and the widths of the authors' exp_SQuAD_sim code,
// which gives every method hn = 100 (the paper: "the number of hidden units
// [is] set to 100").
std::vector<Preset> biblosan_squad_presets(const std::vector<Preset>& made) {
  const std::string source = "Bi-BloSAN paper, Sec. 4.2 and App. B (Fig. 7); Table 4, row ";
  const std::vector<PresetSetting> section = {
      {"task", "locate", "find the sentence holding the answer (Sec. 4.2, App. B)"},
      {"format", "squad", "SQuAD v1.1; the paper's dev set is our test split (docs/data.md)"},
      {"model:embedding_dim", "100", "\"both the word embedding dimension and the number of hidden units are set to 100\" (Sec. 4.2)"},
      {"head-hidden", "100", "hn = 100: the sentence, question and output maps of Fig. 7 (authors' code)"},
      {"batch", "32", "\"batch size of 32\" (Sec. 4.2)"},
      {"keep-prob", "0.8", "\"0.8 dropout keep probability\" (Sec. 4.2)"},
      {"weight-decay", "1e-4", "\"10^-4 L2 regularization weight decay factor\" (Sec. 4.2)"},
      {"optimizer", "adadelta", "\"We use Adadelta optimizer\" (Sec. 4.2)"},
      {"lr", "0.5", "unstated: 0.5, the Adadelta rate of the authors' code"},
      {"epochs", "40", "unstated: 40, max_epoch of the authors' exp_SQuAD_sim code"},
  };
  struct Row {
    const char* encoder;
    const char* base;        // the SNLI preset it starts from
    const char* paper_row;
    const char* figures;     // Table 4: dev accuracy, parameters, time per epoch
    std::vector<PresetSetting> widths;
  };
  const std::vector<Row> rows = {
      {"bilstm", "bilstm-snli", "Bi-LSTM", "68.01 (0.71m parameters, 857 s per epoch)",
       {{"hidden", "100", "hn = 100 per direction (Sec. 4.2; authors' code)"}}},
      {"bigru", "bigru-snli", "Bi-GRU", "67.98 (0.57m parameters, 782 s per epoch)",
       {{"hidden", "100", "hn = 100 per direction (Sec. 4.2; authors' code)"}}},
      {"bisru", "bisru-snli", "Bi-SRU", "67.32 (0.32m parameters, 737 s per epoch)",
       {{"hidden", "100", "hn = 100 per direction (Sec. 4.2; authors' code)"}}},
      {"multicnn", "multicnn-snli", "Multi-CNN", "63.58 (0.60m parameters, 114 s per epoch)",
       {{"model:filters", "50", "unstated: the authors' code's 2 hn / 4 = 50 per kernel width"},
        {"model:min_width", "3", "unstated: the authors' code's widths 3, 4, 5, 6"},
        {"model:max_width", "6", "as above"}}},
      {"transformer", "biblosan-snli", "Multi-head", "64.82 (0.45m parameters, 140 s per epoch)",
       {{"model", "transformer", "\"Multi-head attention (Vaswani et al., 2017)\" (Table 4)"},
        {"hidden", "200", "unstated: the authors' code's 4 heads of 2 hn / 4 = 50"},
        {"heads", "4", "as above"}}},
      {"biblosan", "biblosan-snli", "Bi-BloSAN", "68.38 (0.82m parameters, 293 s per epoch)",
       {{"hidden", "100", "hn = 100 (Sec. 4.2)"},
        {"model:sentence_block_len", "4", "the authors' code's block_len=4 in the sentence-level fusion"}}},
  };
  std::vector<Preset> out;
  for (const Row& r : rows) {
    std::vector<PresetSetting> changes = section;
    changes.insert(changes.end(), r.widths.begin(), r.widths.end());
    Preset row = preset_variant(preset_named(made, r.base), std::string(r.encoder) + "-squad",
                                std::string(r.paper_row) + " on SQuAD sentence location",
                                source + "\"" + r.paper_row + "\"", std::string("dev accuracy ") + r.figures, changes);
    // The Transformer has no activation key of its own (its feed-forward
    // layers are relu, as the paper's "unspecified activation functions").
    if (std::string(r.encoder) == "transformer")
      row.settings.erase(std::remove_if(row.settings.begin(), row.settings.end(),
                                        [](const PresetSetting& s) { return s.key == "model:activation"; }),
                         row.settings.end());
    out.push_back(std::move(row));
  }
  return out;
}

}  // namespace attn
