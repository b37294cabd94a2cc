// Gradcheck samples of the reductions: one axis, several axes with keepdim,
// every axis, leading and middle axes (the column kernel), reduced axes in
// separate blocks (one pass per block) and a transposed input.
#include "attn/ops/reduce/reduce.h"
#include "attn/ops/registry.h"

namespace attn {

namespace {

using ReduceFnRef = Tensor (*)(const Tensor&, const std::vector<int64_t>&, bool);

OpSpec reduce_spec(const std::string& name, ReduceFnRef f) {
  return op_spec(name, "reduce", [f] {
    Generator gen(21);
    auto over = [f](std::vector<int64_t> axes, bool keepdim) {
      return [f, axes, keepdim](const std::vector<Tensor>& in) { return f(in[0], axes, keepdim); };
    };
    std::vector<OpCase> cases;
    cases.push_back({"2x3x4 axis -1", {samples::input({2, 3, 4}, gen)}, over({-1}, false)});
    cases.push_back({"2x3x4 axes {0,2} keepdim", {samples::input({2, 3, 4}, gen)}, over({0, 2}, true)});
    cases.push_back({"2x3x4 axis 0 (leading)", {samples::input({2, 3, 4}, gen)}, over({0}, false)});
    cases.push_back({"2x3x4 axis 1 (middle)", {samples::input({2, 3, 4}, gen)}, over({1}, false)});
    cases.push_back({"2x3x1x4x2 axes {1,2,3} keepdim (middle block)", {samples::input({2, 3, 1, 4, 2}, gen)},
                     over({1, 2, 3}, true)});
    cases.push_back({"2x3x2x2x3 axes {0,2,4} (three separate blocks)", {samples::input({2, 3, 2, 2, 3}, gen)},
                     over({0, 2, 4}, false)});
    cases.push_back({"3x4 all axes", {samples::input({3, 4}, gen)}, over({}, false)});
    cases.push_back({"transposed 3x4 axis 1", {samples::transposed_input({3, 4}, gen)}, over({1}, false)});
    return cases;
  });
}

}  // namespace

void register_reduce_samples(OpRegistry& r) {
  r.add(reduce_spec("sum", sum));
  r.add(reduce_spec("mean", mean));
  r.add(reduce_spec("max", max));  // continuous random values: no ties
  r.add(reduce_spec("logsumexp", logsumexp));
  r.add(op_spec("sum_to", "reduce", [] {
    Generator gen(22);
    return std::vector<OpCase>{
        {"2x3x4 to 3x1", {samples::input({2, 3, 4}, gen)},
         [](const std::vector<Tensor>& in) { return sum_to(in[0], {3, 1}); }, true}};
  }));
}

}  // namespace attn
