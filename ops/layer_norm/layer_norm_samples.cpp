// Gradcheck samples of layer_norm: rows drawn from [-2, 2) so each row's
// variance is well away from 0, gamma away from 0 and non-uniform so every
// output element has its own gradient, and a transposed (strided) input.
#include "attn/ops/layer_norm/layer_norm.h"
#include "attn/ops/registry.h"

namespace attn {

void register_layer_norm_samples(OpRegistry& r) {
  r.add(op_spec("layer_norm", "layer_norm", [] {
    Generator gen(41);
    auto affine = [](const std::vector<Tensor>& in) { return layer_norm(in[0], in[1], in[2]); };
    auto bare = [](const std::vector<Tensor>& in) { return layer_norm(in[0], Tensor(), Tensor()); };
    std::vector<OpCase> cases;
    cases.push_back({"3x5 with gamma and beta",
                     {samples::input({3, 5}, gen, -2, 2), samples::input({5}, gen, 0.5, 1.5),
                      samples::input({5}, gen)},
                     affine});
    cases.push_back({"2x3x4 with gamma and beta",
                     {samples::input({2, 3, 4}, gen, -2, 2), samples::input({4}, gen, 0.5, 1.5),
                      samples::input({4}, gen)},
                     affine});
    cases.push_back({"transposed 4x6 with gamma and beta",
                     {samples::transposed_input({4, 6}, gen, -2, 2), samples::input({6}, gen, 0.5, 1.5),
                      samples::input({6}, gen)},
                     affine});
    cases.push_back({"3x4 without gamma and beta", {samples::input({3, 4}, gen, -2, 2)}, bare});
    return cases;
  }));
}

}  // namespace attn
