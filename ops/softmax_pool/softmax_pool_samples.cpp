// Gradcheck samples of the softmax pooling: every token valid; a mask with a
// fully masked example and huge scores and values at masked tokens (which
// must not leak into the output or the gradients); a longer example with
// wide-ranging scores; and values read through a transposed view.
#include "attn/ops/registry.h"
#include "attn/ops/softmax_pool/softmax_pool.h"

namespace attn {

void register_softmax_pool_samples(OpRegistry& r) {
  r.add(op_spec("softmax_pool", "softmax_pool", [] {
    Generator gen(67);
    using samples::input;
    auto pool = [](const Tensor& mask) {
      return [mask](const std::vector<Tensor>& in) {
        return softmax_pool(in[0], in[1], mask.defined() ? samples::like(mask, in[0]) : mask);
      };
    };
    std::vector<OpCase> cases;
    cases.push_back({"2x3x4 every token valid", {input({2, 3, 4}, gen, -2, 2), input({2, 3, 4}, gen)}, pool(Tensor())});

    Tensor scores = input({3, 4, 5}, gen, -2, 2), values = input({3, 4, 5}, gen);
    write_element(scores, 5, 1e30);  // example 0, token 1: masked below
    write_element(values, 6, 1e30);
    Tensor mask = samples::u8_mask({1, 0, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0}, {3, 4});  // example 1 has no valid token
    cases.push_back({"3x4x5 mask [3, 4], an empty example, huge masked entries", {scores, values}, pool(mask), true});

    cases.push_back({"1x9x3 scores in [-6, 6]", {input({1, 9, 3}, gen, -6, 6), input({1, 9, 3}, gen)}, pool(Tensor())});

    cases.push_back({"2x3x4 transposed values",
                     {input({2, 3, 4}, gen, -2, 2), samples::transposed_input({2, 3, 4}, gen)},
                     pool(Tensor()),
                     true});
    return cases;
  }));
}

}  // namespace attn
