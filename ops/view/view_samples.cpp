// Gradcheck samples of the views: each gradient must land in the right
// elements of the base tensor.
#include "attn/engine/copy.h"
#include "attn/engine/error.h"
#include "attn/ops/registry.h"
#include "attn/ops/unary/unary.h"
#include "attn/ops/view/view.h"

namespace attn {

namespace {

OpSpec view_spec(const std::string& name, Shape shape, bool transposed,
                 std::function<Tensor(const Tensor&)> f) {
  return op_spec(name, "view", [shape, transposed, f] {
    Generator gen(31);
    Tensor x = transposed ? samples::transposed_input(shape, gen) : samples::input(shape, gen);
    // The ramp makes each output element's gradient distinct, so a gradient
    // landing in the wrong element is caught.
    auto fn = [f](const std::vector<Tensor>& in) { return samples::times_ramp(f(in[0])); };
    return std::vector<OpCase>{{shape_str(shape) + (transposed ? " transposed" : ""), {x}, fn}};
  });
}

}  // namespace

void register_view_samples(OpRegistry& r) {
  r.add(view_spec("reshape", {3, 4}, true, [](const Tensor& x) { return reshape(x, {2, -1}); }));
  r.add(view_spec("flatten", {2, 3, 2}, false, [](const Tensor& x) { return flatten(x, 1, 2); }));
  r.add(view_spec("permute", {2, 3, 4}, false, [](const Tensor& x) { return permute(x, {2, 0, 1}); }));
  r.add(view_spec("transpose", {3, 4}, false, [](const Tensor& x) { return transpose(x, 0, 1); }));
  r.add(view_spec("expand", {3, 1}, false, [](const Tensor& x) { return expand(x, {2, 3, 4}); }));
  r.add(view_spec("unsqueeze", {3, 4}, true, [](const Tensor& x) { return unsqueeze(x, 1); }));
  r.add(view_spec("squeeze", {3, 1, 4}, false, [](const Tensor& x) { return squeeze(x, 1); }));
  r.add(view_spec("slice", {5, 4}, true, [](const Tensor& x) { return slice(x, 0, 1, 5, 2); }));
  r.add(view_spec("narrow", {3, 5}, false, [](const Tensor& x) { return narrow(x, 1, 1, 3); }));
  r.add(view_spec("contiguous", {3, 4}, true, [](const Tensor& x) { return contiguous(x); }));
}

}  // namespace attn
