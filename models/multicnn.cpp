#include "attn/models/multicnn.h"

#include "attn/engine/error.h"
#include "attn/ops/join/join.h"

namespace attn {

MultiCnn::MultiCnn(int64_t input_dim, int64_t filters, int64_t min_width, int64_t max_width, Activation act,
                   Generator& gen, DType dtype)
    : width_(filters * (max_width - min_width + 1)),
      s2t_(filters * (max_width - min_width + 1), gen, act, true, dtype) {
  ATTN_CHECK(min_width >= 1 && min_width <= max_width, "multicnn", "n-gram widths ", min_width, "..", max_width,
             " are empty: min_width must lie in 1..max_width");
  for (int64_t k = min_width; k <= max_width; ++k) {
    convs_.push_back(std::make_unique<TokenConv>(k, input_dim, filters, gen, dtype));
    register_module("conv" + std::to_string(k), *convs_.back());
  }
  register_module("s2t", s2t_);
}

EncoderOutput MultiCnn::encode_tokens(const Tensor& x, const Tensor& mask) {
  // The released code applies relu to each width's output before the
  // concatenation; relu(0) = 0 keeps padded tokens exactly zero.
  std::vector<Tensor> parts;
  for (const auto& conv : convs_) parts.push_back(conv->forward(x, mask, Activation::Relu));
  Tensor tokens = parts.size() == 1 ? parts[0] : concat(parts, -1);
  return {tokens, s2t_.forward(tokens, mask)};
}

const ConfigSchema& multicnn_config_keys() {
  using namespace config_limits;
  static const ConfigSchema table(
      "multicnn",
      {int_key("filters", 200, 1, kWidth, "feature maps per n-gram width; tokens are filters * widths wide"),
       int_key("min_width", 3, 1, 64, "the narrowest n-gram width"),
       int_key("max_width", 5, 1, 64, "the widest n-gram width; one convolution per width min_width..max_width"),
       activation_key("activation", Activation::Relu, "act of the source2token readout's hidden layer")});
  return table;
}

std::unique_ptr<Encoder> build_multicnn_encoder(const Config& config, const EncoderContext& ctx) {
  const ConfigSchema& keys = multicnn_config_keys();
  return std::make_unique<MultiCnn>(ctx.input_dim, keys.get_int(config, "filters"), keys.get_int(config, "min_width"),
                                    keys.get_int(config, "max_width"),
                                    activation_from_name(keys.get_string(config, "activation")), *ctx.init, ctx.dtype);
}

}  // namespace attn
