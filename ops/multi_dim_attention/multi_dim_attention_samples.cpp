// Gradcheck samples of the fused multi-dimensional attention: a per-batch
// mask with a query that has no valid key (its gradient is 0, the others'
// is not), a direction mask broadcast over the batch, fewer queries than
// keys, transposed (strided) inputs, a small scale c (tanh near
// saturation), and more features than one CPU feature block (64).
#include "attn/ops/multi_dim_attention/multi_dim_attention.h"
#include "attn/ops/registry.h"

namespace attn {

void register_multi_dim_attention_samples(OpRegistry& r) {
  r.add(op_spec("multi_dim_attention", "multi_dim_attention", [] {
    Generator gen(43);
    auto with = [](Tensor mask, double c) {
      return [mask, c](const std::vector<Tensor>& in) {
        return multi_dim_attention(in[0], in[1], in[2], samples::like(mask, in[0]), c);
      };
    };
    auto qkv = [&gen](int64_t B, int64_t nq, int64_t nk, int64_t d, double range) {
      return std::vector<Tensor>{samples::input({B, nq, d}, gen, -range, range),
                                 samples::input({B, nk, d}, gen, -range, range),
                                 samples::input({B, nk, d}, gen)};
    };
    std::vector<OpCase> cases;

    // Batch 0: query 1 has no valid key. Batch 1: every query sees key 3.
    Tensor per_batch = samples::u8_mask({1, 1, 0, 1,  0, 0, 0, 0,  0, 1, 1, 0,
                                         0, 0, 0, 1,  1, 0, 0, 1,  1, 1, 1, 1},
                                        {2, 3, 4});
    cases.push_back({"B2 nq3 nk4 d3, per-batch mask with an empty query row", qkv(2, 3, 4, 3, 2.0),
                     with(per_batch, 5.0)});

    // Forward direction mask (j < i): query 0 has no valid key.
    Tensor forward_mask = samples::u8_mask({0, 0, 0, 0,  1, 0, 0, 0,  1, 1, 0, 0,  1, 1, 1, 0}, {4, 4});
    OpCase directional{"B2 n4 d5, forward mask [4,4] broadcast over the batch", qkv(2, 4, 4, 5, 2.0),
                       with(forward_mask, 5.0), true};
    cases.push_back(directional);

    Tensor all_valid = samples::u8_mask({1}, {1});
    OpCase strided{"B2 nq3 nk3 d4, transposed query, key and values",
                   {samples::transposed_input({2, 3, 4}, gen, -2, 2), samples::transposed_input({2, 3, 4}, gen, -2, 2),
                    samples::transposed_input({2, 3, 4}, gen)},
                   with(all_valid, 5.0), true};
    cases.push_back(strided);

    cases.push_back({"B1 nq2 nk3 d4, c = 1 (tanh near saturation)", qkv(1, 2, 3, 4, 1.5), with(all_valid, 1.0)});
    cases.push_back({"B1 nq2 nk3 d70, two CPU feature blocks", qkv(1, 2, 3, 70, 2.0), with(all_valid, 5.0)});
    return cases;
  }));
}

}  // namespace attn
