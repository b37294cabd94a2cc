#include "attn/models/birnn.h"

#include <cmath>

#include "attn/ops/join/join.h"
#include "attn/ops/matmul/matmul.h"

namespace attn {

namespace {

// Initial values (docs/models.md, Bi-LSTM and Bi-GRU): the TensorFlow form
// as tf.get_variable's default initialiser gives the cell's one kernel over
// [x, h] (Glorot uniform with fans in + hidden and G), biases 0, and the
// TensorFlow GRU's gate bias 1.0 (GRUCell's constant_initializer(1.0)); the
// PyTorch form as torch.nn.LSTM/GRU: every weight and bias U(-1/sqrt(h), 1/sqrt(h)).
struct Init {
  double weight_limit;
  double bias_limit;
  double gate_bias;  // the TensorFlow GRU's r and u blocks
};

Init init_for(RecurrentCell cell, CellForm form, int64_t input_dim, int64_t hidden) {
  const int64_t G = recurrent_gate_blocks(cell) * hidden;
  if (form == CellForm::PyTorch) {
    const double a = 1.0 / std::sqrt(static_cast<double>(hidden));
    return {a, a, 0.0};
  }
  return {std::sqrt(6.0 / static_cast<double>(input_dim + hidden + G)), 0.0,
          cell == RecurrentCell::Gru ? 1.0 : 0.0};
}

}  // namespace

RnnDirection::RnnDirection(int64_t input_dim, int64_t hidden, RecurrentCell cell, CellForm form, Generator& gen,
                           DType dtype) {
  const int64_t G = recurrent_gate_blocks(cell) * hidden;
  const Init init = init_for(cell, form, input_dim, hidden);
  auto uniform = [&](const Shape& shape, double a) { return rand_uniform(shape, -a, a, gen, dtype); };
  w_ih = register_parameter("w_ih", uniform({G, input_dim}, init.weight_limit));
  Tensor b = init.bias_limit > 0 ? uniform({G}, init.bias_limit) : zeros({G}, dtype);
  if (init.gate_bias != 0.0) {
    std::vector<double> v = b.to_vector();
    for (int64_t i = 0; i < 2 * hidden; ++i) v[i] = init.gate_bias;
    b = from_vector(v, {G}, dtype);
  }
  b_ih = register_parameter("b_ih", b);
  w_hh = register_parameter("w_hh", uniform({hidden, G}, init.weight_limit));
  if (form == CellForm::PyTorch) b_hh = register_parameter("b_hh", uniform({G}, init.bias_limit));
}

BiRnn::BiRnn(int64_t input_dim, int64_t hidden, RecurrentCell cell, CellForm form, Activation readout,
             Generator& gen, DType dtype)
    : hidden_(hidden),
      cell_(cell),
      form_(form),
      fw_(input_dim, hidden, cell, form, gen, dtype),
      bw_(input_dim, hidden, cell, form, gen, dtype),
      s2t_(2 * hidden, gen, readout, true, dtype) {
  register_module("fw", fw_);
  register_module("bw", bw_);
  register_module("s2t", s2t_);
}

Tensor BiRnn::run(const RnnDirection& d, const Tensor& x, const Tensor& mask, bool reverse) const {
  // Every token's input projection in one GEMM; the op runs the steps.
  const Tensor xw = linear(x, d.w_ih, d.b_ih);
  return recurrent_sequence(xw, d.w_hh, d.b_hh, mask, cell_, form_, reverse);
}

EncoderOutput BiRnn::encode_tokens(const Tensor& x, const Tensor& mask) {
  Tensor tokens = concat({run(fw_, x, mask, false), run(bw_, x, mask, true)}, -1);
  return {tokens, s2t_.forward(tokens, mask)};
}

namespace {

std::vector<ConfigKey> birnn_keys(const char* cell) {
  using namespace config_limits;
  return {int_key("hidden", 300, 1, kWidth, "width of each direction; tokens and sentence are 2 * hidden wide")
              .as_flag(),
          choice_key("cell_form", "tensorflow", {"tensorflow", "pytorch"},
                     std::string("the ") + cell + " cell's form: the authors' TensorFlow cell or PyTorch's"),
          activation_key("activation", Activation::Relu, "act of the source2token readout's first layer")};
}

std::unique_ptr<Encoder> build(const Config& config, const EncoderContext& ctx, const ConfigSchema& keys,
                               RecurrentCell cell) {
  const CellForm form = keys.get_string(config, "cell_form") == "pytorch" ? CellForm::PyTorch : CellForm::TensorFlow;
  return std::make_unique<BiRnn>(ctx.input_dim, keys.get_int(config, "hidden"), cell, form,
                                 activation_from_name(keys.get_string(config, "activation")), *ctx.init, ctx.dtype);
}

}  // namespace

const ConfigSchema& bilstm_config_keys() {
  static const ConfigSchema table("bilstm", birnn_keys("LSTM"));
  return table;
}

const ConfigSchema& bigru_config_keys() {
  static const ConfigSchema table("bigru", birnn_keys("GRU"));
  return table;
}

std::unique_ptr<Encoder> build_bilstm_encoder(const Config& config, const EncoderContext& ctx) {
  return build(config, ctx, bilstm_config_keys(), RecurrentCell::Lstm);
}

std::unique_ptr<Encoder> build_bigru_encoder(const Config& config, const EncoderContext& ctx) {
  return build(config, ctx, bigru_config_keys(), RecurrentCell::Gru);
}

}  // namespace attn
