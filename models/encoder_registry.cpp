// The one list of encoders: name, summary, builder, config keys and memory
// growth. A new mechanism adds one entry here.
#include <algorithm>

#include "attn/engine/error.h"
#include "attn/models/biblosan.h"
#include "attn/models/birnn.h"
#include "attn/models/bisru.h"
#include "attn/models/bow.h"
#include "attn/models/deepatt.h"
#include "attn/models/disan.h"
#include "attn/models/encoder.h"
#include "attn/models/hrchycnn.h"
#include "attn/models/masks.h"
#include "attn/models/mtsa.h"
#include "attn/models/multicnn.h"
#include "attn/models/multiscale.h"
#include "attn/models/resan.h"
#include "attn/models/transformer.h"

namespace attn {

const char* const kDefaultEncoder = "mtsa";

const std::vector<EncoderInfo>& encoder_registry() {
  // Memory growth: n x n (x d) tensors give 2 (MTSA's per-head maps, the
  // Transformer, DiSAN and ReSAN with materialised scores, and the Multi-Scale
  // Transformer, whose default windows n/16, n/8, n/4 grow with n); the fused
  // attention of DiSAN and ReSAN holds O(n d) tensors plus small n x n masks
  // (1.25); Bi-BloSAN's blocks of length ~n^(1/3) give n*r and (n/r)^2 terms
  // (1.5); the bag of words and the RNN and CNN baselines (states and gate
  // activations per step, the SRU's c per token; convolutions over a fixed window of tokens) are linear.
  static const std::vector<EncoderInfo> registry = {
      {"mtsa", "multi-mask tensorized self-attention (MTSA)", build_mtsa_encoder, mtsa_config_keys, true, 2.0, 2.0,
       "diff_prod"},
      {"disan", "directional self-attention network (DiSAN)", build_disan_encoder, disan_config_keys, true, 1.25,
       2.0, "diff_prod"},
      {"biblosan", "bi-directional block self-attention network (Bi-BloSAN)", build_biblosan_encoder,
       biblosan_config_keys, true, 1.5, 1.5, "diff_prod"},
      {"mstrans", "Multi-Scale Transformer (windowed heads at several scales)", build_mstrans_encoder,
       mstrans_config_keys, true, 2.0, 2.0, "absdiff_diff"},
      {"resan", "reinforced self-attention network (ReSAN; RSS trained by REINFORCE)", build_resan_encoder,
       resan_config_keys, true, 1.25, 2.0, "diff_prod"},
      {"transformer", "Transformer encoder (multi-head self-attention)", build_transformer_encoder,
       transformer_config_keys, true, 2.0, 2.0, "diff_prod"},
      {"deepatt", "deep attentive network for SRL (Tan et al. 2017): FFN and attention sub-layers, multi-head or MTSA",
       build_deepatt_encoder, deepatt_config_keys, false, 2.0, 2.0, "diff_prod"},
      {"bilstm", "Bi-LSTM baseline (300D each way) with a source2token readout", build_bilstm_encoder,
       bilstm_config_keys, true, 1.0, 1.0, "diff_prod"},
      {"bigru", "Bi-GRU baseline (300D each way) with a source2token readout", build_bigru_encoder,
       bigru_config_keys, true, 1.0, 1.0, "diff_prod"},
      {"bisru", "Bi-SRU baseline (300D each way, Lei & Zhang 2017) with a source2token readout",
       build_bisru_encoder, bisru_config_keys, true, 1.0, 1.0, "diff_prod"},
      {"multicnn", "Multi-CNN baseline: 3-, 4- and 5-gram convolutions, relu (Kim 2014)", build_multicnn_encoder,
       multicnn_config_keys, true, 1.0, 1.0, "diff_prod"},
      {"hrchycnn", "Hrchy-CNN baseline: stacked convolutions, gated linear units, residuals (Gehring et al. 2017)",
       build_hrchycnn_encoder, hrchycnn_config_keys, true, 1.0, 1.0, "diff_prod"},
      {"bow", "bag of words: the mean of the inputs (the floor to beat)", build_bow_encoder, bow_config_keys, false,
       1.0, 1.0, "diff_prod"},
  };
  return registry;
}

const EncoderInfo* find_encoder(const std::string& name) {
  for (const EncoderInfo& info : encoder_registry())
    if (name == info.name) return &info;
  return nullptr;
}

std::string encoder_name(const Config& config) { return config.get("encoder", kDefaultEncoder); }

std::vector<std::string> encoder_names() {
  std::vector<std::string> names;
  for (const EncoderInfo& info : encoder_registry()) names.push_back(info.name);
  std::sort(names.begin(), names.end());
  return names;
}

EncoderOutput Encoder::encode(const Tensor& x, const Tensor& mask) {
  // Shapes that do not match are left to the mechanism's own checks, which
  // name the encoder.
  const bool matches = x.defined() && mask.defined() && x.dim() == 3 && mask.dtype() == DType::U8 &&
                       mask.dim() == 2 && mask.size(0) == x.size(0) && mask.size(1) == x.size(1) &&
                       mask.device() == x.device();
  return encode_tokens(matches ? zero_padded(x, mask) : x, mask);
}

std::unique_ptr<Encoder> build_encoder(const Config& config, const EncoderContext& ctx) {
  ATTN_CHECK(ctx.init && ctx.noise, "build_encoder", "the context needs both generators");
  ATTN_CHECK(ctx.input_dim > 0, "build_encoder", "input dimension must be positive, got ", ctx.input_dim);
  const std::string name = encoder_name(config);
  const EncoderInfo* info = find_encoder(name);
  if (!info) {
    std::string known;
    for (const std::string& k : encoder_names()) known += (known.empty() ? "" : ", ") + k;
    ATTN_CHECK(false, "build_encoder", "unknown encoder '", name, "' (known: ", known, ")");
  }
  return info->build(config, ctx);
}

}  // namespace attn
