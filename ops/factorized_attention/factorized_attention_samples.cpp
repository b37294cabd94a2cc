// Gradcheck samples of the factorized attention: both sigma_t and sigma_s
// choices; forward / backward heads with a padded token (its rows pass no
// gradient, the others do) and a query with no allowed key; heads split off
// one feature axis (strided q, k, v, s); v used again after the attention.
#include "attn/ops/binary/binary.h"
#include "attn/ops/factorized_attention/factorized_attention.h"
#include "attn/ops/unary/unary.h"
#include "attn/ops/registry.h"
#include "attn/ops/view/view.h"

namespace attn {

void register_factorized_attention_samples(OpRegistry& r) {
  r.add(op_spec("factorized_attention", "factorized_attention", [] {
    Generator gen(53);
    // Head 0 forward (query j sees keys i < j: query 0 sees none), head 1 backward.
    const Tensor fw_bw = samples::u8_mask({0, 0, 0, 0,  1, 0, 0, 0,  1, 1, 0, 0,  1, 1, 1, 0,
                                           0, 1, 1, 1,  0, 0, 1, 1,  0, 0, 0, 1,  0, 0, 0, 0},
                                          {2, 4, 4});
    const Tensor one_padded = samples::u8_mask({1, 1, 1, 1,  1, 1, 1, 0}, {2, 4});
    auto with = [fw_bw, one_padded](bool sigmoid_t, bool sigmoid_s) {
      return [=](const std::vector<Tensor>& in) {
        return factorized_attention(in[0], in[1], in[2], in[3], samples::like(fw_bw, in[0]),
                                    samples::like(one_padded, in[0]), sigmoid_t, sigmoid_s)
            .out;
      };
    };
    auto inputs = [&gen](const Shape& shape, double range) {
      return std::vector<Tensor>{samples::input(shape, gen, -range, range), samples::input(shape, gen, -range, range),
                                 samples::input(shape, gen), samples::input(shape, gen, -range, range)};
    };
    std::vector<OpCase> cases;
    cases.push_back({"B2 h2 n4 d3, log-sigmoid sigma_t, identity sigma_s (MTSA's defaults)", inputs({2, 2, 4, 3}, 2.0),
                     with(true, false)});
    cases.push_back({"B2 h2 n4 d3, identity sigma_t, log-sigmoid sigma_s", inputs({2, 2, 4, 3}, 2.0),
                     with(false, true)});
    auto split = [fw_bw, one_padded](const std::vector<Tensor>& in) {
      auto heads = [](const Tensor& t) { return permute(reshape(t, {2, 4, 2, 3}), {0, 2, 1, 3}); };
      return factorized_attention(heads(in[0]), heads(in[1]), heads(in[2]), heads(in[3]),
                                  samples::like(fw_bw, in[0]), samples::like(one_padded, in[0]), true, false)
          .out;
    };
    cases.push_back({"heads split off [2, 4, 6]: strided q, k, v, s", inputs({2, 4, 6}, 2.0), split, true});
    // v (computed, not a leaf) also feeds an op whose backward runs first:
    // the attention adds v's gradient into that pending one (padded keys add
    // nothing and keep what is there).
    auto v_used_twice = [with](const std::vector<Tensor>& in) {
      const Tensor v = mul_scalar(in[2], 1.5);
      return with(true, false)({in[0], in[1], v, in[3]}) + mul_scalar(v, 0.5);
    };
    cases.push_back({"v used again after the attention: its gradient added into the pending one",
                     inputs({2, 2, 4, 3}, 2.0), v_used_twice});
    return cases;
  }));
}

}  // namespace attn
