// The Bi-LSTM and Bi-GRU in the PyTorch cell form against torch.nn.LSTM and
// torch.nn.GRU themselves: tests/fixtures/torch_rnn.safetensors holds
// PyTorch 1.13's weights (its names and layout), inputs, outputs, final
// states and gradients, made once by scripts/make_torch_rnn_fixture.py (run
// on packed sequences, float64). This test reads only that file. The weights
// enter through birnn_params_from_torch (models/birnn.h), the gradients come
// back through birnn_params_to_torch, so the exchange functions users call
// are what is checked.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "attn/engine/copy.h"
#include "attn/models/birnn.h"
#include "attn/models/masks.h"
#include "attn/nn/safetensors.h"
#include "attn/ops/binary/binary.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/ops/view/view.h"
#include "test_util.h"

namespace attn {
namespace {

using namespace testing_support;

const std::map<std::string, Tensor>& fixture() {
  static const std::map<std::string, Tensor> file =
      load_safetensors(std::string(ATTN_SOURCE_DIR) + "/tests/fixtures/torch_rnn.safetensors");
  return file;
}

const Tensor& at(const std::string& name) {
  const auto it = fixture().find(name);
  if (it == fixture().end()) throw std::runtime_error("the fixture lacks " + name);
  return it->second;
}

// The weights (or their gradients) "<prefix>weight_*" and "<prefix>bias_*"
// of the fixture, by PyTorch's names.
std::map<std::string, Tensor> with_prefix(const std::string& prefix) {
  std::map<std::string, Tensor> out;
  for (const auto& [name, t] : fixture()) {
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string rest = name.substr(prefix.size());
    if (rest.rfind("weight_", 0) == 0 || rest.rfind("bias_", 0) == 0) out[rest] = t;
  }
  return out;
}

// The tolerance: u * 2^16 * max(1, max |PyTorch's value|), u = 2^-53.
// Both sides evaluate the same expressions in float64, in different orders
// (GEMM blockings, the two biases added apart or together) and with
// different sigmoid/tanh implementations (each within a few ulp). A value's
// rounding error is at most about u times the number of rounding steps on
// its path times the sum of |terms| met on the way:
//   - steps: per time step one dot product of d_in + h + 2 = 11 terms (x W_ih,
//     h W_hh, both biases) and about 10 elementwise operations (activations,
//     the cell update), over n = 4 steps forward and 4 back through time,
//     plus the weight gradients' sums over B n = 12 (example, step) terms:
//     2 * 4 * 21 + 12 = 180 < 200;
//   - terms: |x| <= 1, |weights| <= 1/sqrt(h) = 0.5 (PyTorch's init), so an
//     11-term pre-activation sums at most 11 * 0.5 = 5.5 < 8 in magnitude;
//   - carried error: a step's Jacobian in the previous state has norm below
//     2 here (gate derivatives <= 1, h = 4 weights <= 0.5), so an error
//     grows at most 2^4 = 16 times over 4 steps;
//   - two sides, each with its own error: a factor 2.
// 2 * 200 * 8 * 16 = 51200 <= 2^16 = 65536, i.e. about 7e-12 at values of 1.
// A float32 step (6e-8), a gate in the wrong block, a bias dropped or
// counted twice, or a padded token read all move values by far more.
double bound(const Tensor& reference) {
  return std::ldexp(1.0, 16 - 53) * std::max(1.0, max_abs(reference));
}

void expect_close(const Tensor& ours, const Tensor& theirs, const std::string& what) {
  ASSERT_EQ(ours.shape(), theirs.shape()) << what;
  EXPECT_LE(max_abs_diff(ours, theirs), bound(theirs)) << what;
}

struct Case {
  RecurrentCell cell;
  const char* name;
};
const Case kCases[] = {{RecurrentCell::Lstm, "lstm"}, {RecurrentCell::Gru, "gru"}};

TEST(RecurrentTorchFixture, OutputsFinalStatesAndGradientsMatchPyTorch) {
  const Tensor& x = at("input.x");  // [3, 4, 5], NaN at padding
  const Tensor& r = at("loss.r");   // [3, 4, 8]
  const std::vector<double> lengths = at("input.lengths").to_vector();
  const int64_t B = x.size(0), n = x.size(1), d_in = x.size(2), h = r.size(2) / 2;
  ASSERT_EQ(B, 3);
  // PyTorch's packed sequences cannot hold an empty sentence; ours can, so
  // our batch is the fixture's three plus one of length 0 (all NaN), which
  // must change nothing in the others and give exactly 0.
  std::vector<double> xs = x.to_vector(), rs = r.to_vector();
  xs.resize(xs.size() + n * d_in, std::numeric_limits<double>::quiet_NaN());
  rs.resize(rs.size() + n * 2 * h, 1.0);
  std::vector<int64_t> lens;
  for (double v : lengths) lens.push_back(static_cast<int64_t>(v));
  lens.push_back(0);
  const Tensor mask = length_mask(lens, n);

  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    const std::string cell = c.name;
    Generator gen(5);
    BiRnn model(d_in, h, c.cell, CellForm::PyTorch, Activation::Relu, gen, DType::F64);
    std::map<std::string, Tensor> state = params_of(model);  // the readout keeps its own weights
    for (const auto& [name, t] : birnn_params_from_torch(with_prefix(cell + "."))) state[name] = t;
    load_into_module(model, state);

    Tensor xin = from_vector(xs, {B + 1, n, d_in}, DType::F64);
    xin.set_requires_grad();
    const Tensor weights = from_vector(rs, {B + 1, n, 2 * h}, DType::F64);
    const EncoderOutput o = model.encode(xin, mask);
    sum(mul(o.tokens, weights)).backward();

    expect_close(contiguous(narrow(o.tokens, 0, 0, B)), at(cell + ".output"), "output");
    EXPECT_EQ(max_abs(narrow(o.tokens, 0, B, 1)), 0.0) << "the empty sentence's tokens";

    // h_n: the forward state after each sentence's last token, the backward
    // one after its first (PyTorch's [direction, B, h]).
    const Tensor& h_n = at(cell + ".h_n");
    for (int64_t b = 0; b < B; ++b)
      for (int64_t j = 0; j < h; ++j) {
        EXPECT_NEAR(o.tokens.at({b, lens[b] - 1, j}), h_n.at({0, b, j}), bound(h_n)) << "h_n fw " << b << " " << j;
        EXPECT_NEAR(o.tokens.at({b, 0, h + j}), h_n.at({1, b, j}), bound(h_n)) << "h_n bw " << b << " " << j;
      }

    const Tensor gx = xin.grad();
    ASSERT_TRUE(gx.defined());
    expect_close(contiguous(narrow(gx, 0, 0, B)), at(cell + ".grad.input.x"), "grad input.x");
    EXPECT_EQ(max_abs(narrow(gx, 0, B, 1)), 0.0) << "the empty sentence's input gradient";

    std::map<std::string, Tensor> grads;
    for (const auto& [name, p] : model.named_parameters())
      if (name.rfind("s2t.", 0) != 0) grads[name] = p.grad();
    const std::map<std::string, Tensor> torch_grads = birnn_params_to_torch(grads);
    const std::map<std::string, Tensor> expected = with_prefix(cell + ".grad.");
    ASSERT_EQ(torch_grads.size(), 8u);
    for (const auto& [name, g] : torch_grads) {
      ASSERT_TRUE(expected.count(name)) << name;
      expect_close(g, expected.at(name), "grad " + name);
    }
  }
}

// The weight exchange both ways, exactly (it only copies and transposes):
// PyTorch's [G, h] recurrent weight is our [h, G], element by element.
TEST(RecurrentTorchFixture, WeightExchangeRoundTripsExactlyAndTransposesTheRecurrentWeight) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    const std::map<std::string, Tensor> theirs = with_prefix(std::string(c.name) + ".");
    ASSERT_EQ(theirs.size(), 8u);
    const std::map<std::string, Tensor> ours = birnn_params_from_torch(theirs);
    const Tensor& w = theirs.at("weight_hh_l0_reverse");  // [G, h]
    const Tensor& ow = ours.at("bw.w_hh");                // [h, G]
    ASSERT_EQ(ow.shape(), Shape({w.size(1), w.size(0)}));
    for (int64_t g = 0; g < w.size(0); ++g)
      for (int64_t j = 0; j < w.size(1); ++j) EXPECT_EQ(ow.at({j, g}), w.at({g, j}));
    const std::map<std::string, Tensor> back = birnn_params_to_torch(ours);
    for (const auto& [name, t] : theirs) EXPECT_EQ(max_abs_diff(back.at(name), t), 0.0) << name;
  }
}

TEST(RecurrentTorchFixture, WeightExchangeRejectsWhatIsNotOneBidirectionalLayer) {
  std::map<std::string, Tensor> state = with_prefix("gru.");
  std::map<std::string, Tensor> two_layers = state;
  two_layers["weight_ih_l1"] = state.at("weight_ih_l0");
  EXPECT_NE(error_of([&] { birnn_params_from_torch(two_layers); }).find("weight_ih_l1"), std::string::npos);
  std::map<std::string, Tensor> one_way = state;
  one_way.erase("bias_hh_l0_reverse");
  EXPECT_NE(error_of([&] { birnn_params_from_torch(one_way); }).find("bias_hh_l0_reverse"), std::string::npos);
  std::map<std::string, Tensor> bad = state;
  bad["bias_ih_l0"] = at("lstm.bias_ih_l0");  // 16 wide against the GRU's 12
  EXPECT_NE(error_of([&] { birnn_params_from_torch(bad); }).find("bias_ih_l0"), std::string::npos);
  // The TensorFlow form has no b_hh: it has no PyTorch counterpart.
  Generator gen(1);
  BiRnn tf(5, 4, RecurrentCell::Gru, CellForm::TensorFlow, Activation::Relu, gen, DType::F64);
  EXPECT_NE(error_of([&] { birnn_params_to_torch(params_of(tf)); }).find("cell_form = pytorch"), std::string::npos);
}

}  // namespace
}  // namespace attn
