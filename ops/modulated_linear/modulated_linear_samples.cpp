// Gradcheck samples of the modulated linear map: a small batch; weights read
// through a transposed view and a scale with negative entries; a single
// token per sentence; and one sentence of several (B = 1).
#include "attn/ops/modulated_linear/modulated_linear.h"
#include "attn/ops/registry.h"

namespace attn {

void register_modulated_linear_samples(OpRegistry& r) {
  r.add(op_spec("modulated_linear", "modulated_linear", [] {
    Generator gen(71);
    using samples::input;
    auto fn = [](const std::vector<Tensor>& in) { return modulated_linear(in[0], in[1], in[2], in[3]); };
    std::vector<OpCase> cases;
    cases.push_back(
        {"x 2x3x4, h 5", {input({2, 3, 4}, gen), input({2, 4}, gen), input({5, 4}, gen), input({5, 4}, gen)}, fn});
    cases.push_back({"x 3x2x3, transposed weights, scale in [-2, 2]",
                     {input({3, 2, 3}, gen), input({3, 3}, gen, -2, 2), samples::transposed_input({4, 3}, gen),
                      samples::transposed_input({4, 3}, gen)},
                     fn,
                     true});
    cases.push_back({"x 4x1x3 (one token), h 2",
                     {input({4, 1, 3}, gen), input({4, 3}, gen), input({2, 3}, gen), input({2, 3}, gen)},
                     fn});
    cases.push_back({"x 1x6x2 (one sentence), h 3",
                     {input({1, 6, 2}, gen), input({1, 2}, gen), input({3, 2}, gen), input({3, 2}, gen)},
                     fn});
    return cases;
  }));
}

}  // namespace attn
