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

std::unique_ptr<Encoder> build_disan_encoder(const Config& config, const EncoderContext& ctx) {
  return std::make_unique<Disan>(ctx.input_dim, config.get_int("hidden", 300),
                                 activation_from_name(config.get("activation", "relu")),
                                 config.get_double("scale_c", 5.0), *ctx.init, ctx.dtype,
                                 config.get_bool("materialize_scores", false));
}

}  // namespace attn
