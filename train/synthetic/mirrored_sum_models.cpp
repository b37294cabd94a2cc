#include "attn/train/synthetic/mirrored_sum_models.h"

#include "attn/engine/error.h"
#include "attn/models/model_config_check.h"

namespace attn {

const std::vector<MirroredSumModelInfo>& mirrored_sum_models() {
  static const std::vector<MirroredSumModelInfo> models = {
      {"transformer", "Transformer, 2 layers, 10 heads (full attention, sinusoidal positions)"},
      {"ms-trans-hier-s", "MS-Trans-Hier-S: mstrans, 2 layers, 10 heads of scale 3"},
      {"ms-trans-deephier-s", "MS-Trans-deepHier-S: mstrans, 6 layers, 10 heads of scale 3"},
      {"ms-trans-flex", "MS-Trans-Flex: mstrans, 2 layers, scales 3, n/16, n/8, n/4, n/2, 2 heads each"},
      {"bilstm", "Bi-LSTM, hidden/2 each way, source2token readout"},
      {"bigru", "Bi-GRU, hidden/2 each way, source2token readout"},
      {"bisru", "Bi-SRU, hidden/2 each way, source2token readout"},
      {"multicnn", "Multi-CNN, ceil(hidden/3) filters of widths 3, 4, 5"},
      {"hrchycnn", "Hrchy-CNN, 3 layers of width-5 convolutions with gated linear units"},
  };
  return models;
}

namespace {

std::string known_models() {
  std::string text;
  for (const MirroredSumModelInfo& m : mirrored_sum_models()) text += (text.empty() ? "" : ", ") + std::string(m.name);
  return text;
}

Config mstrans(int64_t hidden, int64_t layers, const std::string& scales, const std::string& head_counts) {
  Config c;
  c.set("encoder", "mstrans");
  c.set("hidden", std::to_string(hidden));
  c.set("layers", std::to_string(layers));
  c.set("scales", scales);
  c.set("head_counts", head_counts);
  return c;
}

// "10,10" for 2 layers of one scale; "2,2,2,2,2,2,2,2,2,2" for 2 layers x 5 scales.
std::string repeated(int64_t value, int64_t times) {
  std::string text;
  for (int64_t i = 0; i < times; ++i) text += (i ? "," : "") + std::to_string(value);
  return text;
}

}  // namespace

Config mirrored_sum_encoder_config(const std::string& name, int64_t hidden) {
  bool known = false;
  for (const MirroredSumModelInfo& m : mirrored_sum_models()) known = known || name == m.name;
  ATTN_CHECK(known, "mirrored sum", "unknown model '", name, "' (known: ", known_models(), ")");
  ATTN_CHECK(hidden >= 1, "mirrored sum", "the model width must be positive, got ", hidden);
  const bool attention = name == "transformer" || name.rfind("ms-trans-", 0) == 0;
  if (attention)
    ATTN_CHECK(hidden % 10 == 0, "mirrored sum", "model '", name,
               "' has 10 heads per layer, so the width must be a multiple of 10, got ", hidden);
  Config c;
  if (name == "transformer") {
    c.set("encoder", "transformer");
    c.set("hidden", std::to_string(hidden));
    c.set("heads", "10");
    c.set("layers", "2");
  } else if (name == "ms-trans-hier-s") {
    c = mstrans(hidden, 2, "3", repeated(10, 2));
  } else if (name == "ms-trans-deephier-s") {
    c = mstrans(hidden, 6, "3", repeated(10, 6));
  } else if (name == "ms-trans-flex") {
    c = mstrans(hidden, 2, "3,n/16,n/8,n/4,n/2", repeated(2, 2 * 5));
  } else if (name == "bilstm" || name == "bigru" || name == "bisru") {
    ATTN_CHECK(hidden % 2 == 0, "mirrored sum", "model '", name,
               "' runs hidden / 2 units each way, so the width must be even, got ", hidden);
    c.set("encoder", name);
    c.set("hidden", std::to_string(hidden / 2));
  } else if (name == "multicnn") {
    c.set("encoder", "multicnn");
    c.set("filters", std::to_string((hidden + 2) / 3));
  } else {  // hrchycnn
    c.set("encoder", "hrchycnn");
    c.set("hidden", std::to_string(hidden));
  }
  check_model_config(c, "mirrored sum model '" + name + "'");
  return c;
}

MirroredSumModel::MirroredSumModel(const Config& encoder_config, int64_t dim, DType dtype, Generator& init,
                                   Generator& noise) {
  EncoderContext ctx;
  ctx.input_dim = dim;
  ctx.dtype = dtype;
  ctx.init = &init;
  ctx.noise = &noise;
  encoder_ = build_encoder(encoder_config, ctx);
  encoder_config.check_all_used("mirrored sum encoder config");
  // One linear layer: the paper feeds the sentence representation to "a
  // classifier" for its real tasks and says nothing of this one; a linear
  // map keeps the comparison about what each encoder's sentence vector holds.
  head_ = std::make_unique<Linear>(encoder_->sentence_dim(), dim, init, true, dtype);
  register_module("encoder", *encoder_);
  register_module("head", *head_);
}

Tensor MirroredSumModel::forward(const Tensor& x, const Tensor& mask) {
  return head_->forward(encoder_->encode(x, mask).sentence);
}

}  // namespace attn
