// Seed 001's Table 6: WMT14 English-German with t2t's Transformer, its
// encoder self-attention multi-head or MTSA, in the paper's two setups
// (Sec. 4.4, App. B.1). The t2t hyper-parameter sets are those of the
// tensor2tensor version whose transformer_base_single_gpu has batch_size 2048
// (the paper's Setup 1 batch): transformer_base with learning_rate 0.2,
// warm-up 8000, Adam beta2 0.997, dropout 0.1, label smoothing 0.1, and
// transformer_base_single_gpu changing batch_size to 2048 and warm-up to 16000.
#include "attn/train/cli/dataset_presets.h"

namespace attn {

std::vector<Preset> translation_presets(const std::vector<Preset>&) {
  const char* source = "MTSA paper, Sec. 4.4 and App. B.1; Table 6";
  const std::vector<PresetSetting> common = {
      {"task", "translate", "WMT 2014 English-German (Sec. 4.4)"},
      {"format", "wmt14", "newstest2013 is dev, newstest2014 test (t2t translate_ende_wmt)"},
      {"src", "en", "English to German"},
      {"tgt", "de", "English to German"},
      {"bpe-merges", "32000", "unstated: t2t's WMT14 en-de vocabulary of ~32K subwords (translate_ende_wmt32k)"},
      {"lr", "0.2", "t2t transformer_base learning_rate (\"do not tune the hyperparameters\", Sec. 4.4)"},
      {"max-len", "256", "t2t transformer_base max_length"},
      {"beam", "4", "unstated: t2t's decoding default beam_size 4"},
      {"alpha", "0.6", "unstated: t2t's decoding default alpha 0.6"},
      {"eval-every", "10000", "unstated: a greedy dev BLEU every 10K steps (the test uses the last checkpoint)"},
  };
  const std::vector<PresetSetting> setup1 = {
      {"batch", "2048", "tokens per step: \"batch size of 2048\" (Sec. 4.4; t2t transformer_base_single_gpu)"},
      {"max-steps", "250000", "\"training step of 250K\", last checkpoint reported (Sec. 4.4)"},
      {"warmup", "16000", "t2t transformer_base_single_gpu learning_rate_warmup_steps"},
  };
  const std::vector<PresetSetting> setup2 = {
      {"batch", "24576",
       "tokens per step: \"batch size ... 6144 per GPU\" on 4 GPUs (Sec. 4.4), one synchronous step over 4 x 6144 here"},
      {"max-steps", "133000", "\"training step of 133K\" (Sec. 4.4)"},
      {"warmup", "8000", "t2t transformer_base learning_rate_warmup_steps"},
  };
  const PresetSetting mtsa = {"model", "mtsa", "\"replace multi-head self-attention modules in the encoder ... with MTSA\""};
  const PresetSetting multi_head = {"model", "transformer", "the official Transformer's multi-head encoder self-attention"};
  auto settings = [&](const PresetSetting& model, const std::vector<PresetSetting>& setup) {
    std::vector<PresetSetting> s = {model};
    s.insert(s.end(), common.begin(), common.end());
    s.insert(s.end(), setup.begin(), setup.end());
    return s;
  };
  return {
      {"mtsa-wmt14-setup1", "Transformer with MTSA encoder self-attention, WMT14 en-de, Setup 1", source,
       "BLEU 24.09 (mean of 5 runs; multi-head 23.64, t-test p = 0.001)", settings(mtsa, setup1)},
      {"transformer-wmt14-setup1", "Transformer (multi-head), WMT14 en-de, Setup 1", source,
       "BLEU 23.64 (mean of 5 runs)", settings(multi_head, setup1)},
      {"mtsa-wmt14-setup2", "Transformer with MTSA encoder self-attention, WMT14 en-de, Setup 2", source,
       "BLEU 27.21 (mean of 3 runs; multi-head 26.98, t-test p = 0.080)", settings(mtsa, setup2)},
      {"transformer-wmt14-setup2", "Transformer (multi-head), WMT14 en-de, Setup 2", source,
       "BLEU 26.98 (mean of 3 runs)", settings(multi_head, setup2)},
  };
}

}  // namespace attn
