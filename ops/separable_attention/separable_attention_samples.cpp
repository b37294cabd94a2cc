// Gradcheck samples of the separable attention: a per-group mask with a query
// that has no allowed key (its gradient is 0, the others' is not), a forward
// mask broadcast over the groups, fewer queries than keys, dropout keep
// factors, and token2token and source2token scores wide enough that the
// softmax is far from uniform.
#include "attn/engine/copy.h"
#include "attn/ops/registry.h"
#include "attn/ops/separable_attention/separable_attention.h"
#include "attn/ops/unary/unary.h"

namespace attn {

void register_separable_attention_samples(OpRegistry& r) {
  r.add(op_spec("separable_attention", "separable_attention", [] {
    Generator gen(47);
    auto with = [](Tensor allowed, Tensor keep_pairs = Tensor(), Tensor keep_features = Tensor()) {
      return [allowed, keep_pairs, keep_features](const std::vector<Tensor>& in) {
        auto like = [&](const Tensor& t) { return t.defined() ? samples::like(t, in[0]) : Tensor(); };
        return separable_attention(in[0], in[1], in[2], samples::like(allowed, in[0]), like(keep_pairs),
                                   like(keep_features));
      };
    };
    auto inputs = [&gen](int64_t G, int64_t nq, int64_t nk, int64_t d, double range) {
      return std::vector<Tensor>{samples::input({G, nq, nk}, gen, -range, range),
                                 samples::input({G, nk, d}, gen, -range, range), samples::input({G, nk, d}, gen)};
    };
    std::vector<OpCase> cases;

    // Group 0: query 1 has no allowed key. Group 1: every query sees key 3.
    Tensor per_group = samples::u8_mask({1, 1, 0, 1,  0, 0, 0, 0,  0, 1, 1, 0,
                                         0, 0, 0, 1,  1, 0, 0, 1,  1, 1, 1, 1},
                                        {2, 3, 4});
    cases.push_back({"G2 nq3 nk4 d3, per-group mask with an empty query row", inputs(2, 3, 4, 3, 2.0),
                     with(per_group)});

    Tensor forward_mask = samples::u8_mask({0, 0, 0, 0,  1, 0, 0, 0,  1, 1, 0, 0,  1, 1, 1, 0}, {4, 4});
    cases.push_back({"G2 n4 d5, forward mask [4,4] broadcast over the groups", inputs(2, 4, 4, 5, 2.0),
                     with(forward_mask), true});

    Tensor all = samples::u8_mask({1}, {1});
    cases.push_back({"G1 nq2 nk5 d4, scores in [-6, 6]", inputs(1, 2, 5, 4, 6.0), with(all), true});

    // Dropout's scaled keep masks (keep probability 0.8): constants, not checked.
    Generator drop(48);
    auto keep = [&drop](const Shape& shape) {
      std::vector<int64_t> bits;
      Tensor u = rand_uniform(shape, 0, 1, drop, DType::F64);
      for (double x : u.to_vector()) bits.push_back(x < 0.8);
      return mul_scalar(cast(samples::u8_mask(bits, shape), DType::F64), 1.25);
    };
    cases.push_back({"G2 nq3 nk3 d4, dropout keep factors on pairs and features", inputs(2, 3, 3, 4, 2.0),
                     with(all, keep({2, 3, 3}), keep({2, 3, 4})), true});
    return cases;
  }));
}

}  // namespace attn
