#include "attn/models/disan.h"

#include "attn/ops/join/join.h"

namespace attn {

namespace {
DisaOptions disa_options(Direction dir, Activation act, double c, bool materialize) {
  DisaOptions o;
  o.direction = dir;
  o.activation = act;
  o.scale_c = c;
  o.materialize_scores = materialize;
  return o;
}
}  // namespace

Disan::Disan(int64_t input_dim, int64_t hidden, Activation act, double scale_c, Generator& gen, DType dtype,
             bool materialize_scores)
    : hidden_(hidden),
      fw_(input_dim, hidden, disa_options(Direction::Forward, act, scale_c, materialize_scores), gen, dtype),
      bw_(input_dim, hidden, disa_options(Direction::Backward, act, scale_c, materialize_scores), gen, dtype),
      s2t_(2 * hidden, gen, act, true, dtype) {
  register_module("fw", fw_);
  register_module("bw", bw_);
  register_module("s2t", s2t_);
}

EncoderOutput Disan::encode_tokens(const Tensor& x, const Tensor& mask) {
  Tensor tokens = concat({fw_.forward(x, mask), bw_.forward(x, mask)}, -1);
  return {tokens, s2t_.forward(tokens, mask)};
}

const ConfigSchema& disan_config_keys() {
  using namespace config_limits;
  static const ConfigSchema table(
      "disan",
      {int_key("hidden", 300, 1, kWidth, "width of each direction; tokens and sentence are 2 * hidden wide")
           .as_flag(),
       activation_key("activation", Activation::Relu, "act of the input layers, the fusion gate and the readout"),
       float_key_above("scale_c", 5.0, 0, kScale, "c in c tanh(x / c), the scaling of the alignment scores"),
       bool_key("materialize_scores", false,
                "build the [B, n, n, d] scores (the papers' memory profile) instead of the fused kernel")});
  return table;
}

std::unique_ptr<Encoder> build_disan_encoder(const Config& config, const EncoderContext& ctx) {
  const ConfigSchema& keys = disan_config_keys();
  return std::make_unique<Disan>(ctx.input_dim, keys.get_int(config, "hidden"),
                                 activation_from_name(keys.get_string(config, "activation")),
                                 keys.get_float(config, "scale_c"), *ctx.init, ctx.dtype,
                                 keys.get_bool(config, "materialize_scores"));
}

}  // namespace attn
