// Gradcheck samples of the unary family: inputs kept away from each op's
// kink (0 for abs/relu/elu, the clamp bounds) and domain edge (log, sqrt, pow).
#include "attn/ops/registry.h"
#include "attn/ops/unary/unary.h"
#include "attn/ops/view/view.h"

namespace attn {

namespace {

OpSpec unary_spec(const std::string& name, std::function<Tensor(const Tensor&)> f, double lo, double hi,
                  bool signed_magnitudes) {
  return op_spec(name, "unary", [f, lo, hi, signed_magnitudes] {
    Generator gen(7);
    auto make = [&](const Shape& shape) {
      return signed_magnitudes ? samples::signed_input(shape, gen, lo, hi) : samples::input(shape, gen, lo, hi);
    };
    auto fn = [f](const std::vector<Tensor>& in) { return f(in[0]); };
    OpCase plain{"3x4", {make({3, 4})}, fn};
    // A transposed (non-contiguous) view of values drawn the same way.
    Tensor base = make({4, 3}).detach();
    OpCase strided{"transposed 3x4", {transpose(base, 0, 1).detach().set_requires_grad(true)}, fn};
    return std::vector<OpCase>{plain, strided};
  });
}

}  // namespace

void register_unary_samples(OpRegistry& r) {
  r.add(unary_spec("neg", [](const Tensor& x) { return neg(x); }, -2, 2, false));
  r.add(unary_spec("exp", [](const Tensor& x) { return exp(x); }, -2, 2, false));
  r.add(unary_spec("log", [](const Tensor& x) { return log(x); }, 0.5, 3, false));
  r.add(unary_spec("sqrt", [](const Tensor& x) { return sqrt(x); }, 0.5, 3, false));
  r.add(unary_spec("abs", [](const Tensor& x) { return abs(x); }, 0.2, 2, true));
  r.add(unary_spec("tanh", [](const Tensor& x) { return tanh(x); }, -2, 2, false));
  r.add(unary_spec("sigmoid", [](const Tensor& x) { return sigmoid(x); }, -3, 3, false));
  r.add(unary_spec("log_sigmoid", [](const Tensor& x) { return log_sigmoid(x); }, -3, 3, false));
  r.add(unary_spec("relu", [](const Tensor& x) { return relu(x); }, 0.2, 2, true));
  r.add(unary_spec("elu", [](const Tensor& x) { return elu(x, 1.0); }, 0.2, 2, true));
  r.add(unary_spec("softplus", [](const Tensor& x) { return softplus(x); }, -3, 3, false));
  r.add(unary_spec("add_scalar", [](const Tensor& x) { return add_scalar(x, 1.5); }, -2, 2, false));
  r.add(unary_spec("mul_scalar", [](const Tensor& x) { return mul_scalar(x, -0.7); }, -2, 2, false));
  r.add(unary_spec("pow_scalar", [](const Tensor& x) { return pow_scalar(x, 2.5); }, 0.5, 2, false));
  // Values in +-[0.1, 1.5) against bounds +-0.8: none sits on a bound.
  r.add(unary_spec("clamp", [](const Tensor& x) { return clamp(x, -0.8, 0.8); }, 0.1, 1.5, true));
}

}  // namespace attn
