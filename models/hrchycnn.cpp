#include "attn/models/hrchycnn.h"

#include "attn/ops/binary/binary.h"
#include "attn/ops/sigmoid_gate/sigmoid_gate.h"
#include "attn/ops/view/view.h"

namespace attn {

namespace {

// The gated linear unit a * sigmoid(b) over the halves [a | b] of the last
// axis: the fused sigmoid gate with a zero second branch, one pass each way,
// reading the halves as views.
Tensor glu(const Tensor& c, int64_t half) {
  return sigmoid_gate(narrow(c, -1, half, half), narrow(c, -1, 0, half), zeros({}, c.dtype(), c.device()));
}

}  // namespace

HrchyCnn::HrchyCnn(int64_t input_dim, int64_t hidden, int64_t layers, int64_t width, bool relu_before_gate,
                   Activation act, Generator& gen, DType dtype)
    : hidden_(hidden), relu_before_gate_(relu_before_gate), s2t_(hidden, gen, act, true, dtype) {
  for (int64_t l = 0; l < layers; ++l) {
    convs_.push_back(std::make_unique<TokenConv>(width, l == 0 ? input_dim : hidden, 2 * hidden, gen, dtype));
    register_module("conv" + std::to_string(l), *convs_.back());
  }
  register_module("s2t", s2t_);
}

EncoderOutput HrchyCnn::encode_tokens(const Tensor& x, const Tensor& mask) {
  Tensor h = x;
  for (size_t l = 0; l < convs_.size(); ++l) {
    const Tensor c = convs_[l]->forward(h, mask, relu_before_gate_ ? Activation::Relu : Activation::None);
    // Padded rows of c are exactly zero, so g is too (0 * sigmoid(0)), and
    // so is the residual sum.
    const Tensor g = glu(c, hidden_);
    h = l == 0 ? g : g + h;
  }
  return {h, s2t_.forward(h, mask)};
}

const ConfigSchema& hrchycnn_config_keys() {
  using namespace config_limits;
  static const ConfigSchema table(
      "hrchycnn",
      {int_key("hidden", 300, 1, kWidth, "width D of every layer's output, the tokens and the sentence").as_flag(),
       int_key("layers", 3, 1, kLayers, "convolution layers, each with a gated linear unit"),
       int_key("width", 5, 1, 64, "kernel length of every layer"),
       bool_key("relu_before_gate", true, "relu on the convolution before the gated linear unit (the released code)"),
       activation_key("activation", Activation::Relu, "act of the source2token readout's hidden layer")});
  return table;
}

std::unique_ptr<Encoder> build_hrchycnn_encoder(const Config& config, const EncoderContext& ctx) {
  const ConfigSchema& keys = hrchycnn_config_keys();
  return std::make_unique<HrchyCnn>(ctx.input_dim, keys.get_int(config, "hidden"), keys.get_int(config, "layers"),
                                    keys.get_int(config, "width"), keys.get_bool(config, "relu_before_gate"),
                                    activation_from_name(keys.get_string(config, "activation")), *ctx.init, ctx.dtype);
}

}  // namespace attn
