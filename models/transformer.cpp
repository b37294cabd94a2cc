#include "attn/models/transformer.h"

#include <string>

#include "attn/engine/error.h"
#include "attn/models/masks.h"
#include "attn/models/positional.h"
#include "attn/ops/binary/binary.h"
#include "attn/ops/view/view.h"

namespace attn {

namespace {
// Checked before any member is built, so a bad config fails with its own message.
const TransformerOptions& checked(const TransformerOptions& o) {
  const char* op = "transformer";
  ATTN_CHECK(o.hidden > 0 && o.heads > 0 && o.hidden % o.heads == 0, op, "hidden ", o.hidden,
             " must be a positive multiple of heads ", o.heads);
  ATTN_CHECK(o.layers >= 1, op, "layers must be at least 1, got ", o.layers);
  ATTN_CHECK(o.ffn_dim >= 0, op, "ffn_dim must be positive (0 = 4 * hidden), got ", o.ffn_dim);
  ATTN_CHECK(o.keep_prob > 0 && o.keep_prob <= 1, op, "keep_prob must lie in (0, 1], got ", o.keep_prob);
  return o;
}
}  // namespace

TransformerLayer::TransformerLayer(int64_t hidden, int64_t heads, int64_t ffn_dim, double keep_prob, Generator& init,
                                   Generator& noise, DType dtype)
    : attn_(hidden, heads, init, dtype),
      ln1_(hidden, 1e-6, dtype),
      ffn1_(hidden, ffn_dim, init, true, dtype),
      ffn2_(ffn_dim, hidden, init, true, dtype),
      ln2_(hidden, 1e-6, dtype),
      drop_(keep_prob, noise) {
  register_module("attn", attn_);
  register_module("ln1", ln1_);
  register_module("ffn1", ffn1_);
  register_module("ffn2", ffn2_);
  register_module("ln2", ln2_);
  register_module("dropout", drop_);
}

Tensor TransformerLayer::forward(const Tensor& h, const Tensor& mask) const {
  Tensor z = ln1_(h + drop_(attn_.forward(h, mask)));
  Tensor out = ln2_(z + drop_(ffn2_(ffn1_.forward(z, Activation::Relu))));
  return zero_padded(out, mask);
}

Transformer::Transformer(int64_t input_dim, const TransformerOptions& o, Generator& init, Generator& noise,
                         DType dtype)
    : input_dim_(input_dim),
      hidden_(o.hidden),
      drop_(checked(o).keep_prob, noise),
      s2t_(o.hidden, init, Activation::Relu, true, dtype) {
  ATTN_CHECK(input_dim > 0, "transformer", "input dimension must be positive, got ", input_dim);
  if (input_dim != hidden_) {
    proj_ = std::make_unique<Linear>(input_dim, hidden_, init, true, dtype);
    register_module("proj", *proj_);
  }
  const int64_t ffn_dim = o.ffn_dim > 0 ? o.ffn_dim : 4 * hidden_;
  for (int64_t l = 0; l < o.layers; ++l) {
    layers_.push_back(std::make_unique<TransformerLayer>(hidden_, o.heads, ffn_dim, o.keep_prob, init, noise, dtype));
    register_module("layer" + std::to_string(l), *layers_.back());
  }
  register_module("dropout", drop_);
  register_module("s2t", s2t_);
}

EncoderOutput Transformer::encode_tokens(const Tensor& x, const Tensor& mask) {
  const char* op = "transformer";
  ATTN_CHECK(x.dim() == 3 && x.size(2) == input_dim_, op, "expects x [B, n, ", input_dim_, "], got ",
             shape_str(x.shape()));
  ATTN_CHECK(mask.dtype() == DType::U8 && mask.shape() == Shape({x.size(0), x.size(1)}), op,
             "mask must be uint8 [B, n] = ", shape_str({x.size(0), x.size(1)}), ", got ", dtype_name(mask.dtype()),
             " ", shape_str(mask.shape()));
  Tensor h = proj_ ? (*proj_)(x) : x;
  h = h + sinusoidal_positions(x.size(1), hidden_, h.dtype(), h.device());
  h = zero_padded(drop_(h), mask);
  for (const auto& layer : layers_) h = layer->forward(h, mask);
  return {h, s2t_.forward(h, mask)};
}

const ConfigSchema& transformer_config_keys() {
  using namespace config_limits;
  static const ConfigSchema table(
      "transformer",
      {int_key("hidden", 300, 1, kWidth, "model width D (tokens and sentence); a multiple of heads").as_flag(),
       int_key("heads", 10, 1, kHeads, "attention heads, each hidden / heads wide").as_flag(),
       int_key("layers", 1, 1, kLayers, "encoder layers"),
       int_key_without_default("ffn_dim", "4 * hidden", 0, 4 * kWidth,
                               "inner width of the feed-forward layers (0: 4 * hidden)"),
       probability_key("keep_prob", 1.0, "dropout keep probability on the input and after each sublayer (1: off)")});
  return table;
}

std::unique_ptr<Encoder> build_transformer_encoder(const Config& config, const EncoderContext& ctx) {
  const ConfigSchema& keys = transformer_config_keys();
  TransformerOptions o;
  o.hidden = keys.get_int(config, "hidden");
  o.heads = keys.get_int(config, "heads");
  o.layers = keys.get_int(config, "layers");
  o.ffn_dim = keys.get_int(config, "ffn_dim", 4 * o.hidden);
  o.keep_prob = keys.get_float(config, "keep_prob");
  return std::make_unique<Transformer>(ctx.input_dim, o, *ctx.init, *ctx.noise, ctx.dtype);
}

}  // namespace attn
