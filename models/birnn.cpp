#include "attn/models/birnn.h"

#include <cmath>

#include "attn/engine/copy.h"
#include "attn/engine/error.h"
#include "attn/ops/join/join.h"
#include "attn/ops/matmul/matmul.h"
#include "attn/ops/view/view.h"

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

constexpr const char* kExchange = "birnn weight exchange";

// Our name for one of PyTorch's, or "" for a name it does not know.
struct TorchName {
  const char* torch;
  const char* ours;
  bool transposed;
};
const TorchName kTorchNames[] = {
    {"weight_ih_l0", "fw.w_ih", false},         {"bias_ih_l0", "fw.b_ih", false},
    {"weight_hh_l0", "fw.w_hh", true},          {"bias_hh_l0", "fw.b_hh", false},
    {"weight_ih_l0_reverse", "bw.w_ih", false}, {"bias_ih_l0_reverse", "bw.b_ih", false},
    {"weight_hh_l0_reverse", "bw.w_hh", true},  {"bias_hh_l0_reverse", "bw.b_hh", false},
};

// A contiguous copy, transposed for the recurrent weight (clone: the result
// never aliases the caller's tensors). Detached: this moves values, not a
// step of a computation.
Tensor exchanged(const Tensor& t, bool transposed) {
  return clone(transposed ? transpose(t.detach(), 0, 1) : t.detach());
}

// Checks one direction's four PyTorch-layout tensors against each other:
// weight_hh [G, h] with G = 3 h or 4 h, weight_ih [G, in], biases [G].
void check_torch_direction(const std::map<std::string, Tensor>& s, const std::string& suffix) {
  const Tensor& w_hh = s.at("weight_hh_l0" + suffix);
  ATTN_CHECK(w_hh.dim() == 2 && w_hh.size(1) >= 1 &&
                 (w_hh.size(0) == 3 * w_hh.size(1) || w_hh.size(0) == 4 * w_hh.size(1)),
             kExchange, "weight_hh_l0", suffix, " must be [G, h] with G = 3 h (GRU) or 4 h (LSTM), got ",
             shape_str(w_hh.shape()));
  const int64_t G = w_hh.size(0);
  const Tensor& w_ih = s.at("weight_ih_l0" + suffix);
  ATTN_CHECK(w_ih.dim() == 2 && w_ih.size(0) == G, kExchange, "weight_ih_l0", suffix, " must be [", G,
             ", input], got ", shape_str(w_ih.shape()));
  for (const char* b : {"bias_ih_l0", "bias_hh_l0"})
    ATTN_CHECK(s.at(b + suffix).shape() == Shape({G}), kExchange, b, suffix, " must be [", G, "], got ",
               shape_str(s.at(b + suffix).shape()));
}

}  // namespace

std::map<std::string, Tensor> birnn_params_from_torch(const std::map<std::string, Tensor>& torch_state) {
  for (const auto& [name, t] : torch_state) {
    (void)t;
    bool known = false;
    for (const TorchName& n : kTorchNames) known = known || name == n.torch;
    ATTN_CHECK(known, kExchange, "'", name,
               "' is not a tensor of a one-layer bidirectional torch.nn.LSTM or torch.nn.GRU without proj_size");
  }
  for (const TorchName& n : kTorchNames)
    ATTN_CHECK(torch_state.count(n.torch), kExchange, "'", n.torch, "' is missing (a bidirectional RNN with biases "
               "has weight_ih_l0, weight_hh_l0, bias_ih_l0, bias_hh_l0 and the same with _reverse)");
  check_torch_direction(torch_state, "");
  check_torch_direction(torch_state, "_reverse");
  ATTN_CHECK(torch_state.at("weight_hh_l0").shape() == torch_state.at("weight_hh_l0_reverse").shape() &&
                 torch_state.at("weight_ih_l0").shape() == torch_state.at("weight_ih_l0_reverse").shape(),
             kExchange, "the two directions differ in shape");
  std::map<std::string, Tensor> out;
  for (const TorchName& n : kTorchNames) out[n.ours] = exchanged(torch_state.at(n.torch), n.transposed);
  return out;
}

std::map<std::string, Tensor> birnn_params_to_torch(const std::map<std::string, Tensor>& params) {
  std::map<std::string, Tensor> out;
  for (const TorchName& n : kTorchNames) {
    const auto it = params.find(n.ours);
    ATTN_CHECK(it != params.end() && it->second.defined(), kExchange, "'", n.ours, "' is missing",
               std::string(n.ours).find("b_hh") != std::string::npos
                   ? " (the TensorFlow cell form has no b_hh: only cell_form = pytorch maps to PyTorch)"
                   : "");
    out[n.torch] = exchanged(it->second, n.transposed);
  }
  check_torch_direction(out, "");
  check_torch_direction(out, "_reverse");
  return out;
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
