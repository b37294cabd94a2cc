// Gradcheck samples of the fused dot-product attention: padded keys and an
// example without a valid key (its gradient is 0, the others' is not), fewer
// queries than keys, heads read in place from a [B, n, h * d] projection
// (the Transformer's split_heads view), transposed (strided) inputs, scores
// wide enough that the softmax is far from uniform, and more keys and
// features than one warp of 32 lanes.
#include <cmath>

#include "attn/ops/dot_product_attention/dot_product_attention.h"
#include "attn/ops/registry.h"
#include "attn/ops/view/view.h"

namespace attn {

namespace {

// q [B, h, nq, d] and k [B, h, nk, d] in [-range, range) (the scores' spread),
// v [B, h, nk, d] in [-1, 1).
std::vector<Tensor> random_qkv(Generator& gen, int64_t B, int64_t h, int64_t nq, int64_t nk, int64_t d, double range) {
  return {samples::input({B, h, nq, d}, gen, -range, range), samples::input({B, h, nk, d}, gen, -range, range),
          samples::input({B, h, nk, d}, gen)};
}

}  // namespace

void register_dot_product_attention_samples(OpRegistry& r) {
  r.add(op_spec("dot_product_attention", "dot_product_attention", [] {
    Generator gen(59);
    auto with = [](Tensor valid) {
      return [valid](const std::vector<Tensor>& in) {
        return dot_product_attention(in[0], in[1], in[2], samples::like(valid, in[0]),
                                     1.0 / std::sqrt(static_cast<double>(in[0].size(3))))
            .out;
      };
    };
    auto qkv = [&gen](int64_t B, int64_t h, int64_t nq, int64_t nk, int64_t d, double range) {
      return random_qkv(gen, B, h, nq, nk, d, range);
    };
    std::vector<OpCase> cases;
    cases.push_back({"B3 h2 n4 d3, lengths 4, 2, 0 (no valid key)", qkv(3, 2, 4, 4, 3, 2.0),
                     with(samples::length_mask({4, 2, 0}, 4))});
    cases.push_back({"B1 h2 nq3 nk5 d4, length 4, scores in [-3, 3]", qkv(1, 2, 3, 5, 4, 3.0),
                     with(samples::length_mask({4}, 5))});
    cases.push_back({"B1 h1 nq2 nk35 d33 (wider than a warp), length 33", qkv(1, 1, 2, 35, 33, 1.0),
                     with(samples::length_mask({33}, 35))});
    // The Transformer's layout: heads are views of [B, n, h * d] projections.
    Tensor valid = samples::length_mask({4, 3}, 4);
    auto split = [](const Tensor& x) { return transpose(reshape(x, {x.size(0), x.size(1), 2, 3}), 1, 2); };
    OpCase heads{
        "B2 n4 h2 d3, split_heads views of [B, n, h d], lengths 4, 3",
        {samples::input({2, 4, 6}, gen, -2, 2), samples::input({2, 4, 6}, gen, -2, 2), samples::input({2, 4, 6}, gen)},
        [valid, split](const std::vector<Tensor>& in) {
          return dot_product_attention(split(in[0]), split(in[1]), split(in[2]), samples::like(valid, in[0]), 0.5).out;
        },
        true};
    cases.push_back(heads);
    OpCase strided{"B2 h1 n4 d3, transposed q, k, v, lengths 4, 3",
                   {samples::transposed_input({2, 1, 4, 3}, gen, -2, 2),
                    samples::transposed_input({2, 1, 4, 3}, gen, -2, 2), samples::transposed_input({2, 1, 4, 3}, gen)},
                   with(valid),
                   true};
    cases.push_back(strided);
    // No padding (8 queries, 32 keys): the kernels read the queries and the
    // saved probabilities in place; the queries are split_heads views.
    Tensor valid32 = samples::length_mask({32, 20}, 32);
    auto split8 = [](const Tensor& x) { return transpose(reshape(x, {x.size(0), x.size(1), 2, 3}), 1, 2); };
    OpCase unpadded{"B2 h2 nq8 nk32 d3, split_heads queries, lengths 32, 20",
                    {samples::input({2, 8, 6}, gen, -2, 2), samples::input({2, 2, 32, 3}, gen, -2, 2),
                     samples::input({2, 2, 32, 3}, gen)},
                    [valid32, split8](const std::vector<Tensor>& in) {
                      return dot_product_attention(split8(in[0]), in[1], in[2], samples::like(valid32, in[0]), 0.5).out;
                    },
                    true};
    cases.push_back(unpadded);
    return cases;
  }));
  // The causal order: as many queries as keys (the decoder's training pass),
  // fewer queries than keys (the last positions, as an incremental decoding
  // step sees them), padded keys, a split_heads layout and keys wider than a
  // warp.
  r.add(op_spec("causal_dot_product_attention", "dot_product_attention", [] {
    Generator gen(61);
    auto with = [](Tensor valid) {
      return [valid](const std::vector<Tensor>& in) {
        return causal_dot_product_attention(in[0], in[1], in[2], samples::like(valid, in[0]),
                                            1.0 / std::sqrt(static_cast<double>(in[0].size(3))))
            .out;
      };
    };
    auto qkv = [&gen](int64_t B, int64_t h, int64_t nq, int64_t nk, int64_t d, double range) {
      return random_qkv(gen, B, h, nq, nk, d, range);
    };
    std::vector<OpCase> cases;
    cases.push_back({"B3 h2 n4 d3, lengths 4, 2, 0 (no valid key)", qkv(3, 2, 4, 4, 3, 2.0),
                     with(samples::length_mask({4, 2, 0}, 4))});
    cases.push_back({"B2 h2 nq2 nk5 d4 (the last two positions), lengths 5, 3, scores in [-3, 3]",
                     qkv(2, 2, 2, 5, 4, 3.0), with(samples::length_mask({5, 3}, 5))});
    cases.push_back({"B1 h1 nq35 nk35 d2 (more keys than a warp), length 33", qkv(1, 1, 35, 35, 2, 1.0),
                     with(samples::length_mask({33}, 35))});
    Tensor valid = samples::length_mask({4, 3}, 4);
    auto split = [](const Tensor& x) { return transpose(reshape(x, {x.size(0), x.size(1), 2, 3}), 1, 2); };
    OpCase heads{
        "B2 n4 h2 d3, split_heads views of [B, n, h d], lengths 4, 3",
        {samples::input({2, 4, 6}, gen, -2, 2), samples::input({2, 4, 6}, gen, -2, 2), samples::input({2, 4, 6}, gen)},
        [valid, split](const std::vector<Tensor>& in) {
          return causal_dot_product_attention(split(in[0]), split(in[1]), split(in[2]), samples::like(valid, in[0]),
                                              0.5)
              .out;
        },
        true};
    cases.push_back(heads);
    return cases;
  }));
}

}  // namespace attn
