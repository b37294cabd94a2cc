// Gradcheck samples of the fused window attention: several radii in one batch
// with padded examples (a padded query whose whole window is padding has no
// allowed key: its gradient is 0, the others' is not), radius 0 (each query
// sees itself alone), radii reaching past the sentence (R capped at n - 1:
// full masked attention), one feature per head, transposed (strided) inputs,
// scores wide enough that the softmax is far from uniform, and a band and a
// head wider than a warp of 32 lanes.
#include <cmath>

#include "attn/ops/registry.h"
#include "attn/ops/view/view.h"
#include "attn/ops/window_attention/window_attention.h"

namespace attn {

void register_window_attention_samples(OpRegistry& r) {
  r.add(op_spec("window_attention", "window_attention", [] {
    Generator gen(53);
    auto with = [](Tensor valid, std::vector<int64_t> radii) {
      return [valid, radii](const std::vector<Tensor>& in) {
        const Tensor on_device = samples::like(valid, in[0]);
        return fused_window_attention(in[0], in[1], in[2], window_band_mask(on_device, radii),
                                      1.0 / std::sqrt(static_cast<double>(in[0].size(3))))
            .out;
      };
    };
    auto qkv = [&gen](int64_t B, int64_t h, int64_t n, int64_t d, double range) {
      return std::vector<Tensor>{samples::input({B, h, n, d}, gen, -range, range),
                                 samples::input({B, h, n, d}, gen, -range, range), samples::input({B, h, n, d}, gen)};
    };
    std::vector<OpCase> cases;

    // Example 2 (radius 0, length 3): padded queries 3..5 see only padding.
    cases.push_back({"B3 h2 n6 d3, radii 1, 2, 0, lengths 6, 4, 3", qkv(3, 2, 6, 3, 2.0),
                     with(samples::length_mask({6, 4, 3}, 6), {1, 2, 0})});
    cases.push_back({"B2 h1 n5 d1, radii 4 (n - 1) and 9, lengths 5, 2", qkv(2, 1, 5, 1, 2.0),
                     with(samples::length_mask({5, 2}, 5), {4, 9})});
    cases.push_back({"B2 h2 n4 d2, radius 0 only, lengths 4, 2", qkv(2, 2, 4, 2, 1.0),
                     with(samples::length_mask({4, 2}, 4), {0, 0})});
    cases.push_back({"B1 h3 n5 d4, radius 2, scores in [-3, 3]", qkv(1, 3, 5, 4, 3.0),
                     with(samples::length_mask({5}, 5), {2})});
    // A band and a head wider than one warp: the CUDA lanes loop over both.
    cases.push_back({"B1 h1 n17 d33, radius 16 (W = 33), length 15", qkv(1, 1, 17, 33, 1.0),
                     with(samples::length_mask({15}, 17), {16})});
    // The Multi-Scale Transformer's call: a band per head, heads read in place
    // from [B, n, h d] projections.
    const Tensor per_head_valid = samples::length_mask({5, 3}, 5);
    auto split = [](const Tensor& x) { return transpose(reshape(x, {x.size(0), x.size(1), 3, 2}), 1, 2); };
    OpCase per_head{"B2 n5 h3 d2, a band per head (radii 0, 1, 4), split_heads views, lengths 5, 3",
                    {samples::input({2, 5, 6}, gen, -2, 2), samples::input({2, 5, 6}, gen, -2, 2),
                     samples::input({2, 5, 6}, gen)},
                    [per_head_valid, split](const std::vector<Tensor>& in) {
                      const Tensor allowed =
                          window_band_mask_per_head(samples::like(per_head_valid, in[0]), {{0, 0}, {1, 1}, {4, 4}});
                      return fused_window_attention(split(in[0]), split(in[1]), split(in[2]), allowed, 0.7).out;
                    },
                    true};
    cases.push_back(per_head);
    OpCase strided{"B2 h1 n4 d3, transposed q, k, v, radii 1, 3, lengths 4, 3",
                   {samples::transposed_input({2, 1, 4, 3}, gen, -2, 2),
                    samples::transposed_input({2, 1, 4, 3}, gen, -2, 2), samples::transposed_input({2, 1, 4, 3}, gen)},
                   with(samples::length_mask({4, 3}, 4), {1, 3}), true};
    cases.push_back(strided);
    return cases;
  }));
}

}  // namespace attn
