// MTSA paper Table 4: semantic role labelling on CoNLL-2005 with gold
// predicates, the deep attentive network of Tan et al. (2017) with its
// multi-head attention or with MTSA in its place. The MTSA paper takes every
// setting from Tan et al. ("we use the same hyper-parameters provided in (Tan
// et al., 2017) rather than tune them", App. B); where it is silent the
// values are those of Tan et al.'s training command (github XMUNLP/Tagger,
// README).
#include "attn/train/cli/analysis_presets.h"

namespace attn {

namespace {

std::vector<PresetSetting> deepatt_conll05(const std::string& attention) {
  std::vector<PresetSetting> s = {
      {"task", "srl", "\"the SRL task is treated as a BIO tagging problem\" (Sec. 4.2)"},
      {"format", "conll05", "CoNLL-05 with gold predicates (Table 4)"},
      {"model", "deepatt", "Tan et al.'s deepatt (Sec. 4.2)"},
      {"model:attention", attention,
       attention == "mtsa" ? "MTSA in place of multi-head attention (Sec. 4.2)" : "Tan et al.'s multi-head attention"},
      {"hidden", "200", "Tan et al.: hidden_size=200"},
      {"heads", "8", "Tan et al.: num_heads=8"},
      {"model:layers", "10", "Tan et al.: num_hidden_layers=10"},
      {"model:ffn_dim", "800", "Tan et al.: filter_size=800"},
      {"model:embedding_dim", "100", "Tan et al.: feature_size=100, glove.6B.100d (App. B says 200D GloVe for SRL)"},
      {"model:predicate_dim", "100", "Tan et al.: the predicate-mask embedding is feature_size wide"},
      {"model:residual_keep_prob", "0.8", "\"residual connection ... 0.8\" (App. B)"},
      {"model:relu_keep_prob", "0.9", "\"fully-connected layer ... 0.9\" (App. B)"},
      {"model:attn_keep_prob", "0.9",
       attention == "mtsa" ? "\"attention dropout with keep probability of 0.9 ... to both source2token and "
                             "token2token alignment scores\" (App. B): 0.81 for MTSA as a whole"
                           : "Tan et al.: attention_dropout=0.1"},
      {"model:positions", attention == "mtsa" ? "none" : "sinusoidal",
       attention == "mtsa" ? "\"we remove it and only use the forward and backward masks\" (App. B)"
                           : "Tan et al.'s fixed positional embedding"},
      {"keep-prob", "1", "no dropout but deepatt's own: its input dropout is the residual one (Tan et al.)"},
      {"optimizer", "adadelta", "\"by using Adadelta optimizer\" (App. B); Tan et al.: optimizer=Adadelta"},
      {"lr", "1", "Tan et al.: learning_rate_values=[1.0,0.5,0.25]; the halvings at steps 400k and 500k are not "
                  "applied (no schedule option)"},
      {"batch", "150", "Tan et al.: batch_size=4096 tokens; 150 sentences is about that at ~27 words a sentence"},
      {"max-steps", "600000", "Tan et al.: train_steps=600000"},
      {"epochs", "100000", "bounded by --max-steps"},
      {"weight-decay", "0", "unstated: Tan et al. use no L2 (scale_l2=0)"},
      {"weight-decay-scope", "all", "as the other presets (no decay here)"},
      {"weight-decay-factor", "1", "as the other presets (no decay here)"},
      {"clip", "1", "Tan et al.: clip_grad_norm=1.0"},
      {"min-count", "1", "every training word gets a row (App. B)"},
      {"max-len", "0", "unstated: no length cap"},
  };
  if (attention == "mtsa")
    s.push_back({"model:sigma_t", "identity", "\"sigma_t(.) applied to the token2token alignment scores is set to "
                                              "identity(.)\" (App. B)"});
  return s;
}

}  // namespace

std::vector<Preset> srl_presets() {
  const std::string source = "MTSA paper, Sec. 4.2 and App. B; Table 4 (the setup of Tan et al. 2017)";
  return {
      {"deepatt-conll05", "Multi-head (Tan et al.'s deepatt) on CoNLL-05", source,
       "WSJ test F1 84.8 (P 84.5, R 85.2); dev F1 83.1; Brown test F1 74.1", deepatt_conll05("multi_head")},
      {"deepatt-mtsa-conll05", "MTSA in deepatt on CoNLL-05", source,
       "WSJ test F1 84.8 (P 84.2, R 85.3); dev F1 83.6; Brown test F1 74.5", deepatt_conll05("mtsa")},
  };
}

}  // namespace attn
