#include "attn/models/bisru.h"

#include "attn/nn/init.h"
#include "attn/ops/join/join.h"
#include "attn/ops/matmul/matmul.h"
#include "attn/ops/sru/sru.h"

namespace attn {

// Initial values as the authors' TensorFlow variables get them
// (docs/models.md, Bi-SRU): weights by tf.get_variable's default Glorot
// uniform over the weight's own fans, biases 0 (their
// constant_initializer(0) for b_f, b_r and the dense layer's bias).
SruDirection::SruDirection(int64_t hidden, Generator& gen, DType dtype) {
  w = register_parameter("w", glorot_uniform(3 * hidden, hidden, gen, dtype));
  b = register_parameter("b", zeros({2 * hidden}, dtype));
}

BiSru::BiSru(int64_t input_dim, int64_t hidden, Activation readout, Generator& gen, DType dtype)
    : hidden_(hidden),
      proj_(input_dim, hidden, gen, true, dtype),
      fw_(hidden, gen, dtype),
      bw_(hidden, gen, dtype),
      s2t_(2 * hidden, gen, readout, true, dtype) {
  register_module("proj", proj_);
  register_module("fw", fw_);
  register_module("bw", bw_);
  register_module("s2t", s2t_);
}

EncoderOutput BiSru::encode_tokens(const Tensor& x, const Tensor& mask) {
  // x' is both directions' input and their highway term (its padded rows
  // hold relu(b_0), which the op never reads).
  const Tensor rep = proj_.forward(x, Activation::Relu);
  auto run = [&](const SruDirection& d, bool reverse) {
    return sru_sequence(linear(rep, d.w, Tensor()), rep, d.b, mask, reverse);
  };
  Tensor tokens = concat({run(fw_, false), run(bw_, true)}, -1);
  return {tokens, s2t_.forward(tokens, mask)};
}

const ConfigSchema& bisru_config_keys() {
  using namespace config_limits;
  static const ConfigSchema table(
      "bisru",
      {int_key("hidden", 300, 1, kWidth, "width of each direction; tokens and sentence are 2 * hidden wide").as_flag(),
       activation_key("activation", Activation::Relu, "act of the source2token readout's first layer")});
  return table;
}

std::unique_ptr<Encoder> build_bisru_encoder(const Config& config, const EncoderContext& ctx) {
  const ConfigSchema& keys = bisru_config_keys();
  return std::make_unique<BiSru>(ctx.input_dim, keys.get_int(config, "hidden"),
                                 activation_from_name(keys.get_string(config, "activation")), *ctx.init, ctx.dtype);
}

}  // namespace attn
