// Gradcheck samples of the token convolution: odd and even widths with
// SAME padding, a mask with an empty sentence, a one-token sentence and a
// gap, huge values at padded tokens (which must reach nothing), a width
// longer than the sentence, a transposed input, and the unfold alone.
#include "attn/ops/registry.h"
#include "attn/ops/token_conv/token_conv.h"

namespace attn {

namespace {

auto conv(const Tensor& mask, bool with_bias) {
  return [mask, with_bias](const std::vector<Tensor>& in) {
    const Tensor m = mask.defined() ? samples::like(mask, in[0]) : mask;
    return token_conv(in[0], m, in[1], with_bias ? in[2] : Tensor());
  };
}

}  // namespace

void register_token_conv_samples(OpRegistry& r) {
  r.add(op_spec("token_conv", "token_conv", [] {
    Generator gen(431);
    using samples::input;
    std::vector<OpCase> cases;
    cases.push_back({"2x4x3 width 3 -> 2, every token valid",
                     {input({2, 4, 3}, gen), input({3, 3, 2}, gen), input({2}, gen)},
                     conv(Tensor(), true)});

    // Lengths 3, 0, 1 and 5 over n = 5; huge entries at padded tokens.
    Tensor x = input({4, 5, 2}, gen);
    write_element(x, (0 * 5 + 4) * 2, 1e30);       // example 0, token 4 (padded)
    write_element(x, (1 * 5 + 2) * 2 + 1, -1e30);  // example 1, token 2 (padded)
    const Tensor lengths = samples::length_mask({3, 0, 1, 5}, 5);
    cases.push_back({"4x5x2 width 4 -> 3, lengths 3, 0, 1, 5, huge padded entries",
                     {x, input({4, 2, 3}, gen), input({3}, gen)},
                     conv(lengths, true)});

    // A gap inside the sentence: taps on the padded token read zero.
    const Tensor gap = samples::u8_mask({1, 0, 1, 1, 1, 1, 0, 1}, {2, 4});
    cases.push_back({"2x4x3 width 5 (wider than the sentence) -> 2, a padded token inside, no bias",
                     {input({2, 4, 3}, gen), input({5, 3, 2}, gen)},
                     conv(gap, false)});

    cases.push_back({"2x3x4 transposed x, width 2 -> 2",
                     {samples::transposed_input({2, 3, 4}, gen), input({2, 4, 2}, gen), input({2}, gen)},
                     conv(samples::length_mask({3, 2}, 3), true),
                     true});
    return cases;
  }));

  r.add(op_spec("token_unfold", "token_conv", [] {
    Generator gen(433);
    std::vector<OpCase> cases;
    const Tensor mask = samples::length_mask({4, 1, 0}, 4);
    cases.push_back(
        {"3x4x2 width 3, lengths 4, 1, 0", {samples::input({3, 4, 2}, gen)}, [mask](const std::vector<Tensor>& in) {
           return token_unfold(in[0], samples::like(mask, in[0]), 3);
         }});
    cases.push_back({"1x5x2 width 4, every token valid",
                     {samples::input({1, 5, 2}, gen)},
                     [](const std::vector<Tensor>& in) { return token_unfold(in[0], Tensor(), 4); }});
    return cases;
  }));
}

}  // namespace attn
