// Gradcheck samples of the join family. Outputs are multiplied by a fixed
// ramp so a gradient slice sent to the wrong input (or the wrong offset)
// changes the Jacobian.
#include "attn/ops/join/join.h"
#include "attn/ops/registry.h"
#include "attn/ops/unary/unary.h"
#include "attn/ops/view/view.h"

namespace attn {

void register_join_samples(OpRegistry& r) {
  using samples::times_ramp;
  r.add(op_spec("concat", "join", [] {
    Generator gen(41);
    OpCase three{"3 inputs along axis 1, one transposed",
                 {samples::input({2, 3}, gen), samples::transposed_input({2, 2}, gen), samples::input({2, 1}, gen)},
                 [](const std::vector<Tensor>& in) { return times_ramp(concat(in, 1)); }};
    OpCase rows{"2 inputs along axis 0",
                {samples::input({1, 3}, gen), samples::input({2, 3}, gen)},
                [](const std::vector<Tensor>& in) { return times_ramp(concat(in, 0)); }};
    return std::vector<OpCase>{three, rows};
  }));
  r.add(op_spec("stack", "join", [] {
    Generator gen(42);
    OpCase middle{"2 inputs on a new axis 1, one transposed",
                  {samples::input({2, 3}, gen), samples::transposed_input({2, 3}, gen)},
                  [](const std::vector<Tensor>& in) { return times_ramp(stack(in, 1)); }};
    OpCase last{"3 inputs on a new last axis",
                {samples::input({3}, gen), samples::input({3}, gen), samples::input({3}, gen)},
                [](const std::vector<Tensor>& in) { return times_ramp(stack(in, -1)); }};
    return std::vector<OpCase>{middle, last};
  }));
  r.add(op_spec("split", "join", [] {
    Generator gen(43);
    // Each part is scaled differently before rejoining, so every part's
    // gradient differs; the ramp also tells elements within a part apart.
    OpCase parts{"sizes 1,3,1 of a transposed [3, 5] along axis 1",
                 {samples::transposed_input({3, 5}, gen)}, [](const std::vector<Tensor>& in) {
                   std::vector<Tensor> p = split(in[0], {1, 3, 1}, 1);
                   return times_ramp(concat({mul_scalar(p[0], 2.0), mul_scalar(p[1], -0.5), p[2]}, 1));
                 }};
    OpCase chunks{"chunk [4, 3] into 2 along axis 0, second part only", {samples::input({4, 3}, gen)},
                  [](const std::vector<Tensor>& in) { return times_ramp(chunk(in[0], 2, 0)[1]); }};
    return std::vector<OpCase>{parts, chunks};
  }));
  r.add(op_spec("pad", "join", [] {
    Generator gen(44);
    OpCase cols{"[2, 3] padded 1 before, 2 after along axis 1", {samples::input({2, 3}, gen)},
                [](const std::vector<Tensor>& in) { return times_ramp(pad(in[0], 1, 1, 2, 0.5)); }};
    OpCase rows{"transposed [3, 2] padded 2 before along axis 0", {samples::transposed_input({3, 2}, gen)},
                [](const std::vector<Tensor>& in) { return times_ramp(pad(in[0], 0, 2, 0)); }};
    return std::vector<OpCase>{cols, rows};
  }));
}

}  // namespace attn
