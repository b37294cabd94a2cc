// Gradcheck samples of the sigmoid gate: equal shapes, a gate broadcast over
// rows with a transposed operand, a gate driven near saturation, and strided
// incoming gradients.
#include "attn/ops/join/join.h"
#include "attn/ops/registry.h"
#include "attn/ops/sigmoid_gate/sigmoid_gate.h"
#include "attn/ops/view/view.h"

namespace attn {

void register_sigmoid_gate_samples(OpRegistry& r) {
  r.add(op_spec("sigmoid_gate", "sigmoid_gate", [] {
    Generator gen(59);
    auto fn = [](const std::vector<Tensor>& in) { return sigmoid_gate(in[0], in[1], in[2]); };
    using samples::input;
    std::vector<OpCase> cases;
    cases.push_back(
        {"2x3x4 all equal shapes", {input({2, 3, 4}, gen, -2, 2), input({2, 3, 4}, gen), input({2, 3, 4}, gen)}, fn});
    cases.push_back({"z [4] over transposed a [3, 4] and b [2, 3, 4]",
                     {input({4}, gen, -2, 2), samples::transposed_input({3, 4}, gen), input({2, 3, 4}, gen)},
                     fn,
                     true});
    cases.push_back(
        {"z in [-8, 8] (near saturation)", {input({3, 5}, gen, -8, 8), input({3, 5}, gen), input({3, 5}, gen)}, fn});
    // The gate's incoming gradient strided: a half of a concatenation's
    // (rows of unit stride, as ReSAN's two directions pass it) and a
    // transpose's (no unit stride).
    cases.push_back({"gate concatenated with a, gradient read as a half",
                     {input({2, 3, 4}, gen, -2, 2), input({2, 3, 4}, gen), input({2, 3, 4}, gen)},
                     [](const std::vector<Tensor>& in) {
                       return concat({sigmoid_gate(in[0], in[1], in[2]), in[1]}, -1);
                     }});
    cases.push_back({"gate transposed, gradient read through a transpose",
                     {input({3, 5}, gen, -2, 2), input({3, 5}, gen), input({3, 5}, gen)},
                     [](const std::vector<Tensor>& in) { return transpose(sigmoid_gate(in[0], in[1], in[2]), 0, 1); }});
    return cases;
  }));
}

}  // namespace attn
