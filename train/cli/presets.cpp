#include "attn/train/cli/presets.h"

#include "attn/train/cli/analysis_presets.h"
#include "attn/train/cli/dataset_presets.h"

#include <sstream>

#include "attn/util/text.h"

namespace attn {

namespace {

using Settings = std::vector<PresetSetting>;

Settings operator+(Settings a, const Settings& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// What every preset shares: the papers' training loop had no tricks.
const Settings kCommon = {
    {"clip", "0", "no paper clips gradients (MTSA paper App. B: \"without any other trick\")"},
    {"min-count", "1", "every training word gets a row: \"The embedding for a word in the training set but not in "
                       "GloVe is randomly initialized\" (001 App. B; 002 Sec. 4.1; 004 Sec. 5)"},
    {"max-len", "0", "unstated: no length cap"},
    {"weight-decay-scope", "all", "\"L2 regularization ... to all the model\" (001 App. B); gamma ||theta_s||^2 (004 Eq. 16)"},
    {"weight-decay-factor", "1", "gamma ||theta||^2 as written (004 Eq. 16)"},
};

const Settings kAdadeltaLr = {
    {"optimizer", "adadelta", ""},
    {"lr", "0.5", "unstated: 0.5, the Adadelta rate of the authors' released code"},
};
const Settings kAdamLr = {
    {"optimizer", "adam", ""},
    {"lr", "0.001", "unstated: Adam's usual 1e-3"},
};

// MTSA (MTSA paper, App. B). Width and heads are unstated: hidden 600 with 2
// heads (one forward, one backward mask, Sec. 3.2) gives the parameter count
// closest to Table 1's 2.9m.
Settings mtsa(const std::string& task, const std::string& format, const std::string& keep, const std::string& gamma,
              const std::string& steps, const std::string& batch, const std::string& attn_keep,
              const std::string& activation) {
  Settings s = {
      {"task", task, ""},
      {"format", format, ""},
      {"model", "mtsa", ""},
      {"hidden", "600", "unstated: 600 (2 heads) matches Table 1's 2.9m parameters best"},
      {"heads", "2", "\"forward mask to half of the heads and ... backward mask to the other half\" (Sec. 3.2)"},
      {"keep-prob", keep, "p_kp (App. B)"},
      {"weight-decay", gamma, "gamma (App. B)"},
      {"max-steps", steps, "\"completed within\" this many steps (App. B)"},
      {"epochs", "100000", "bounded by --max-steps"},
      {"batch", batch, batch == "128" ? "\"mini batch size of 128\" (App. B)" : "unstated: 32, the prior work's (Bi-BloSAN paper Sec. 4.4)"},
      {"model:attn_keep_prob", attn_keep, attn_keep == "1" ? "\"do not apply the attention dropout\"" : "\"attention dropout with keep probability of 0.8\""},
      {"model:sigma_t", "logsigmoid", "\"set to log(sigmoid(.)) unless otherwise specified\" (App. B)"},
      {"model:activation", activation, activation == "elu" ? "SNLI: \"the activation function for fully-connected layer is set to elu\"" : "\"unspecified activation functions ... relu\" (App. B)"},
      {"model:head_activation", activation, "as the encoder's"},
  };
  return s + kCommon;
}

// The Bi-BloSAN paper's experiments, Bi-BloSAN and its baselines alike: one
// training setup per section, which the paper gives for every method it
// compares ("The batch size is set to 64 for all methods", Sec. 4.1), plus
// the encoder's own settings.
Settings biblosan_paper(const std::string& model, const std::string& task, const std::string& format,
                        const Settings& encoder, const Settings& section) {
  Settings s = {
      {"task", task, ""},
      {"format", format, ""},
      {"model", model, ""},
      {"model:activation", "relu", "\"The unspecified activation functions in all models are set to Relu\" (Sec. 4.1)"},
      {"model:head_activation", "relu", "as above"},
      {"head-hidden", "300", "\"a 300D fully connected layer\" (Sec. 4.1, 4.3)"},
  };
  return s + encoder + section + kCommon;
}

const Settings kBiblosanSnli = Settings{
    {"batch", "64", "\"The batch size is set to 64 for all methods\" (Sec. 4.1)"},
    {"epochs", "50", "\"The training phase takes 50 epochs to converge\" (Sec. 4.1)"},
    {"keep-prob", "0.75", "Sec. 4.1"},
    {"weight-decay", "5e-5", "Sec. 4.1"},
} + kAdadeltaLr;

const Settings kBiblosanSick = Settings{
    {"batch", "64", "\"Adadelta with batch size of 64\" (Sec. 4.3)"},
    {"keep-prob", "0.7", "Sec. 4.3"},
    {"weight-decay", "1e-4", "Sec. 4.3"},
    {"epochs", "50", "unstated: 50, as Sec. 4.1"},
} + kAdadeltaLr;

const Settings kBiblosanClassify = Settings{
    {"batch", "32", "\"Adam with training batch size of 32\" (Sec. 4.4)"},
    {"epochs", "10", "unstated: 10"},
    {"keep-prob", "0.6", "\"decrease the dropout keep probability ... to 0.6\" (Sec. 4.4)"},
    {"weight-decay", "1e-4", "Sec. 4.4"},
} + kAdamLr;

// Bi-BloSAN's width; the baselines' widths are in the paper's list of models (Sec. 4).
const Settings kBiblosanWidth = {{"hidden", "300", "unstated for this section: 300, as Sec. 4.1"}};

// The RNN and CNN baselines as the Bi-BloSAN paper's list of models (Sec. 4) defines them.
const Settings kBiLstm = {
    {"hidden", "300", "\"600D Bi-directional LSTM (300D forward LSTM + 300D backward LSTM)\" (Sec. 4)"},
    {"model:cell_form", "tensorflow", "unstated: the TensorFlow 1 cell of the authors' code"},
};
const Settings kBiGru = {
    {"hidden", "300", "\"600D Bi-directional GRU\" (Sec. 4): 300 per direction"},
    {"model:cell_form", "tensorflow", "unstated: the TensorFlow 1 cell of the authors' code"},
};
const Settings kBiSru = {
    {"hidden", "300", "\"600D Bi-directional SRU\" (Sec. 4): 300 per direction"},
};
const Settings kMultiCnn = {
    {"model:filters", "200", "\"600D CNN sentence embedding model ... (200D for each of 3, 4, 5-gram)\" (Sec. 4)"},
    {"model:min_width", "3", "as above"},
    {"model:max_width", "5", "as above"},
};
const Settings kHrchyCnn = {
    {"hidden", "300", "\"3-layer 300D CNN ... with kernel length 5\" (Sec. 4)"},
    {"model:layers", "3", "as above"},
    {"model:width", "5", "as above"},
    {"model:relu_before_gate", "true", "unstated (\"gated linear units\"): the authors' code's relu before the gate"},
};

// ReSAN (ReSAN paper Sec. 5, "Training Setup"; RL: Sec. 4).
Settings resan(const std::string& task, const std::string& format) {
  Settings s = {
      {"task", task, ""},
      {"format", format, ""},
      {"model", "resan", ""},
      {"hidden", "300", "\"The number of hidden units is 300\""},
      {"keep-prob", "0.75", "chosen from {0.65, 0.70, 0.75, 0.8}; the paper does not say which won"},
      {"weight-decay", "5e-5", "\"The weight decay factor gamma for L2 regularization is set to 5e-5\""},
      {"batch", "64", "unstated: 64, the authors' batch for SNLI in Bi-BloSAN paper"},
      {"epochs", "50", "unstated: 50, as Bi-BloSAN paper's SNLI setup"},
      {"model:activation", "relu", "\"We use ReLU for all unspecified activation functions\""},
      {"model:head_activation", "relu", "as above"},
      {"rl-reward", "probability", "Eq. 17: R = p(y = y* | x) with the selected-fraction penalty"},
      {"rl-lambda", "0.01", "\"fine-tuned with values from {0.005, 0.01, 0.02}\"; the middle one"},
      {"rl-warmup", "dev-loss", "\"until the loss over development set does not decrease significantly\""},
      {"rl-only", "0", "\"theta_r and theta_s are then optimized simultaneously\""},
  };
  return s + kAdadeltaLr + kCommon;
}

// The Multi-Scale Transformer (Multi-Scale Transformer paper). Its appendix with the learning
// rate and dropout is not in the seed text.
Settings mstrans(const std::string& task, const std::string& format, const std::string& hidden,
                 const std::string& heads, const std::string& heads_note) {
  Settings s = {
      {"task", task, ""},
      {"format", format, ""},
      {"model", "mstrans", ""},
      {"hidden", hidden, "H DIM (Table 1)"},
      {"heads", heads, heads_note},
      {"model:alpha", "0.5", "alpha (Table 1)"},
      {"model:layers", "3", "L = 3 (Table 6)"},
      {"model:scales", "1,3,n/16,n/8,n/4", "\"The candidate scales are 1, 3, N/16, N/8, N/4\" (Table 1)"},
      {"keep-prob", "0.75", "unstated: \"listed in the Appendix\", which the seed lacks; 0.75"},
      {"batch", "32", "unstated: 32"},
      {"epochs", "10", "unstated: 10"},
      {"weight-decay", "0", "unstated: none"},
      {"model:head_activation", "relu", "unstated: relu, as the encoder's Eq. 10"},
  };
  return s + kAdamLr + kCommon;
}

std::vector<Preset> make_presets() {
  std::vector<Preset> p;
  p.push_back({"mtsa-snli", "MTSA on SNLI", "MTSA paper, App. B (SNLI paragraph); Table 1", "test accuracy 86.3",
               mtsa("pair", "snli", "0.65", "5e-5", "600000", "128", "1", "elu") + kAdadeltaLr});
  p.push_back({"mtsa-sst5", "MTSA on SST-5", "MTSA paper, App. B (SST-5 paragraph); Table 5",
               "test accuracy 51.3 (mean of 5 runs)",
               mtsa("classify", "sst5", "0.7", "1e-4", "120000", "32", "1", "relu") + kAdadeltaLr});
  p.push_back({"mtsa-trec", "MTSA on TREC", "MTSA paper, App. B (TREC paragraph); Table 5",
               "accuracy 95.3 on TREC_10 (mean of 5 runs)",
               mtsa("classify", "trec", "0.5", "1e-4", "80000", "32", "1", "relu") + kAdadeltaLr});
  for (const char* name : {"cr", "mpqa", "subj"}) {
    const std::string n = name;
    const std::string result = n == "cr" ? "84.9" : n == "mpqa" ? "90.5" : "94.5";
    Settings s = mtsa("classify", n, "0.5", "1e-4", "1000", "32", n == "subj" ? "1" : "0.8", "relu");
    s.push_back({"optimizer", "adam", "\"we here use Adam as the optimizer\" (App. B)"});
    s.push_back({"lr", "0.001", "unstated: Adam's usual 1e-3 (\"do not use any learning rate decay trick\")"});
    p.push_back({"mtsa-" + n, "MTSA on " + std::string(n == "cr" ? "CR" : n == "mpqa" ? "MPQA" : "SUBJ"),
                 "MTSA paper, App. B (CR, MPQA and SUBJ paragraph); Table 5",
                 "accuracy " + result + " (mean of 10-fold cross validation; --fold picks one)", s});
  }
  p.push_back({"biblosan-snli", "Bi-BloSAN on SNLI", "Bi-BloSAN paper, Sec. 4.1; Table 1", "test accuracy 85.7",
               biblosan_paper("biblosan", "pair", "snli",
                              {{"hidden", "240", "\"480D Bi-BloSAN\": 240 per direction, 2.7m parameters against "
                                                 "the paper's 2.8m (Sec. 4.1 also says 300 hidden units)"}},
                              kBiblosanSnli)});
  p.push_back({"biblosan-sick", "Bi-BloSAN on SICK", "Bi-BloSAN paper, Sec. 4.3; Table 5",
               "Pearson 0.8616, Spearman 0.8038, MSE 0.3008 (mean of 5 runs)",
               biblosan_paper("biblosan", "relatedness", "sick", kBiblosanWidth, kBiblosanSick)});
  p.push_back({"biblosan-sst5", "Bi-BloSAN on SST-5", "Bi-BloSAN paper, Sec. 4.4; Table 6", "test accuracy 50.6 (mean of 5 runs)",
               biblosan_paper("biblosan", "classify", "sst5", kBiblosanWidth, kBiblosanClassify)});
  p.push_back({"biblosan-trec", "Bi-BloSAN on TREC", "Bi-BloSAN paper, Sec. 4.4; Table 6",
               "accuracy 94.8 on TREC_10 (mean of 5 runs)",
               biblosan_paper("biblosan", "classify", "trec", kBiblosanWidth, kBiblosanClassify)});
  p.push_back({"mstrans-sst5", "Multi-Scale Transformer on SST-5", "Multi-Scale Transformer paper, Experiments; Tables 1 and 2",
               "test accuracy 51.9", mstrans("classify", "sst5", "300", "10", "head DIM 30 (Table 1): 300 / 30")});
  p.push_back({"mstrans-snli", "Multi-Scale Transformer on SNLI", "Multi-Scale Transformer paper, Experiments; Tables 1, 5 and 6",
               "test accuracy 85.9",
               mstrans("pair", "snli", "600", "5",
                       "N' = 5 (Table 6); Table 1's head DIM 64 does not divide 600, so 120 per head")});
  p.push_back({"resan-snli", "ReSAN on SNLI", "ReSAN paper, Sec. 4 and 5.1; Table 1", "test accuracy 86.3",
               resan("pair", "snli")});
  p.push_back({"resan-sick", "ReSAN on SICK", "ReSAN paper, Sec. 4 and 5.2; Table 3",
               "Pearson 0.8720, Spearman 0.8163, MSE 0.2623 (mean of 5 runs)", resan("relatedness", "sick")});
  p.push_back({"disan-snli", "DiSAN on SNLI", "the DiSAN baseline of Bi-BloSAN paper, Sec. 4.1 (DiSAN's paper is not a seed); Table 1",
               "test accuracy 85.6",
               biblosan_paper("disan", "pair", "snli",
                              {{"hidden", "300", "\"600D ... (300D forward ... + 300D backward ...)\" (Sec. 4)"}},
                              kBiblosanSnli)});

  // The RNN and CNN baselines of the Bi-BloSAN paper's tables. The MTSA paper's
  // Table 1 and Table 5 rows of the same baselines repeat these figures (its
  // App. B: on SNLI and sentence classification "we follow training setup and
  // hyperparameters used in corresponding prior works"), so one preset serves both.
  const std::string mtsa_snli_too = " (MTSA paper Table 1 repeats the row's figures: copied from here)";
  const std::string mtsa_classify_too = " (MTSA paper Table 5 repeats the row's figures: copied from here)";
  struct Baseline {
    const char* name;     // the registry's encoder name, the preset's prefix
    const char* title;    // the papers' row label
    const Settings* encoder;
  };
  const Baseline lstm{"bilstm", "Bi-LSTM", &kBiLstm}, gru{"bigru", "Bi-GRU", &kBiGru}, sru{"bisru", "Bi-SRU", &kBiSru},
      multicnn{"multicnn", "Multi-CNN", &kMultiCnn}, hrchycnn{"hrchycnn", "Hrchy-CNN", &kHrchyCnn};
  auto baseline = [&](const Baseline& b, const std::string& task, const std::string& format,
                      const std::string& dataset, const std::string& source, const std::string& result,
                      const Settings& section) {
    p.push_back({std::string(b.name) + "-" + format, std::string(b.title) + " on " + dataset, source, result,
                 biblosan_paper(b.name, task, format, *b.encoder, section)});
  };
  // SNLI: Table 1 (Sec. 4.1).
  for (const auto& [b, figures] : std::vector<std::pair<Baseline, std::string>>{
           {lstm, "test accuracy 85.0 (train 90.4; 2.9m parameters without the embedding)"},
           {gru, "test accuracy 84.9 (train 91.9; 2.5m parameters without the embedding)"},
           {multicnn, "test accuracy 83.2 (train 89.3; 1.4m parameters without the embedding)"},
           {hrchycnn, "test accuracy 83.9 (train 91.3; 3.4m parameters without the embedding)"}})
    baseline(b, "pair", "snli", "SNLI",
             "the " + std::string(b.title) + " baseline of Bi-BloSAN paper, Sec. 4 and 4.1; Table 1" + mtsa_snli_too,
             figures, kBiblosanSnli);
  // The MTSA paper's Table 1 has no Bi-SRU row.
  baseline(sru, "pair", "snli", "SNLI", "the Bi-SRU baseline of Bi-BloSAN paper, Sec. 4 and 4.1; Table 1",
           "test accuracy 84.8 (train 88.4; 2.0m parameters without the embedding)", kBiblosanSnli);
  // SICK: Table 5 (Sec. 4.3); no Bi-GRU row.
  for (const auto& [b, figures] : std::vector<std::pair<Baseline, std::string>>{
           {lstm, "Pearson 0.8473, Spearman 0.7913, MSE 0.3276 (mean of 5 runs)"},
           {multicnn, "Pearson 0.8374, Spearman 0.7793, MSE 0.3395 (mean of 5 runs)"},
           {hrchycnn, "Pearson 0.8436, Spearman 0.7874, MSE 0.3162 (mean of 5 runs)"}})
    baseline(b, "relatedness", "sick", "SICK",
             "the " + std::string(b.title) + " baseline of Bi-BloSAN paper, Sec. 4 and 4.3; Table 5", figures,
             kBiblosanSick);
  // Sentence classification: Table 6 (Sec. 4.4); only a Bi-LSTM row.
  const std::string classify = "the Bi-LSTM baseline of Bi-BloSAN paper, Sec. 4 and 4.4; Table 6";
  const std::string folds = " (mean of 10-fold cross validation; --fold picks one)";
  baseline(lstm, "classify", "cr", "CR", classify + mtsa_classify_too, "accuracy 84.6" + folds, kBiblosanClassify);
  baseline(lstm, "classify", "mpqa", "MPQA", classify + mtsa_classify_too, "accuracy 90.2" + folds, kBiblosanClassify);
  baseline(lstm, "classify", "subj", "SUBJ", classify + mtsa_classify_too, "accuracy 94.7" + folds, kBiblosanClassify);
  baseline(lstm, "classify", "trec", "TREC", classify + mtsa_classify_too,
           "accuracy 94.4 on TREC_10 (mean of 5 runs)", kBiblosanClassify);
  baseline(lstm, "classify", "sst5", "SST-5", classify + " (column SST-1)" + mtsa_classify_too,
           "test accuracy 49.9 (mean of 5 runs)", kBiblosanClassify);
  baseline(lstm, "classify", "sst2", "SST-2", classify + " (column SST-2; not in the MTSA paper)",
           "test accuracy 87.7 (mean of 5 runs)", kBiblosanClassify);

  for (Preset& row : srl_presets()) p.push_back(std::move(row));
  // Other data sets' tables, with the setup of a row above.
  for (auto* table : {multinli_presets, mtl16_presets, translation_presets})
    for (Preset& row : table(p)) p.push_back(std::move(row));

  // The analyses: each table's rows change one of the presets above.
  for (auto* table : {mtsa_ablation_presets, biblosan_ablation_presets, resan_ablation_presets, mstrans_scale_presets,
                      mstrans_sequence_labelling_presets, biblosan_squad_presets})
    for (Preset& row : table(p)) p.push_back(std::move(row));
  return p;
}

}  // namespace

const std::vector<Preset>& all_presets() {
  static const std::vector<Preset> presets = make_presets();
  return presets;
}

const Preset* find_preset(const std::string& name) {
  for (const Preset& p : all_presets())
    if (p.name == name) return &p;
  return nullptr;
}

namespace {

const char* const kPapersLegend =
    "The papers:\n"
    "  MTSA paper: Shen et al., \"Tensorized Self-Attention: Efficiently Modeling Pairwise and Global\n"
    "    Dependencies Together\" (NAACL 2019), with its appendix\n"
    "  Bi-BloSAN paper: Shen et al., \"Bi-Directional Block Self-Attention for Fast and Memory-Efficient\n"
    "    Sequence Modeling\" (ICLR 2018)\n"
    "  Multi-Scale Transformer paper: Guo et al., \"Multi-Scale Self-Attention for Text Classification\" (AAAI 2020)\n"
    "  ReSAN paper: Shen et al., \"Reinforced Self-Attention Network: a Hybrid of Hard and Soft Attention\n"
    "    for Sequence Modeling\" (IJCAI 2018)\n";

void write_preset(std::ostream& os, const Preset& p) {
  os << p.name << ": " << p.title << "\n  source: " << p.source << "\n  paper: " << p.result << "\n";
  for (const PresetSetting& s : p.settings) {
    os << "  " << (s.key.rfind("model:", 0) == 0 ? s.key : "--" + s.key) << " " << s.value;
    if (!s.note.empty()) os << "  (" << s.note << ")";
    os << "\n";
  }
}

// what_is_unknown: "attn train: unknown --preset"; the name, a guess and the known names follow.
const Preset& known_preset(const std::string& name, const std::string& what_is_unknown) {
  if (const Preset* preset = find_preset(name)) return *preset;
  std::vector<std::string> names;
  for (const Preset& p : all_presets()) names.push_back(p.name);
  throw UsageError(what_is_unknown + " " + text::unknown_word_hint(name, names) + " (`attn presets` lists them)");
}

}  // namespace

std::string presets_listing() {
  std::ostringstream os;
  os << "Presets: attn train --preset NAME --data DIR [--glove FILE]; explicit flags override.\n"
     << "\"unstated\" marks a value the paper does not give (and what is used instead);\n"
     << "\"model:KEY\" is a model config key (docs/models.md).\n"
     << "A preset is named MODEL-FORMAT, the --model and --format it sets. The RNN and CNN baselines\n"
     << "(bilstm, bigru, bisru, multicnn, hrchycnn) take the Bi-BloSAN paper's setup of each section, which\n"
     << "it gives for all methods; the MTSA paper repeats their figures. The papers' analyses (ablations,\n"
     << "scale studies) are named MODEL-FORMAT-ROW: the main row's preset with what the row changes.\n\n"
     << kPapersLegend;
  for (const Preset& p : all_presets()) {
    os << "\n";
    write_preset(os, p);
  }
  return os.str();
}

std::string preset_listing(const std::string& name) {
  std::ostringstream os;
  write_preset(os, known_preset(name, "attn presets: unknown preset"));
  return os.str();
}

Config apply_preset(const std::string& name, ArgParser& parser) {
  const Preset* preset = &known_preset(name, "attn train: unknown --preset");
  Config model;
  for (const PresetSetting& s : preset->settings) {
    if (s.key.rfind("model:", 0) == 0) model.set(s.key.substr(6), s.value);
    else parser.set_default(s.key, s.value);
  }
  return model;
}

}  // namespace attn
