// Gradcheck samples of the SRU sequence op: each direction over a batch whose
// sentences have lengths 4, 1 and 0 (padding after them), all tokens valid
// without a mask or a bias, and u read through a transpose.
#include "attn/ops/registry.h"
#include "attn/ops/sru/sru.h"
#include "attn/ops/view/view.h"

namespace attn {

void register_sru_samples(OpRegistry& r) {
  r.add(op_spec("sru_sequence", "sru", [] {
    Generator gen(433);
    using samples::input;
    const int64_t B = 3, n = 4, h = 2;
    const Tensor mask = samples::length_mask({4, 1, 0}, n);
    std::vector<OpCase> cases;
    for (bool reverse : {false, true}) {
      cases.push_back({std::string(reverse ? "reverse" : "forward") + ", lengths 4, 1, 0",
                       {input({B, n, 3 * h}, gen, -1.5, 1.5), input({B, n, h}, gen), input({2 * h}, gen)},
                       [mask, reverse](const std::vector<Tensor>& x) {
                         return sru_sequence(x[0], x[1], x[2], samples::like(mask, x[0]), reverse);
                       }});
    }
    cases.push_back({"no mask, no bias", {input({2, 3, 3 * h}, gen), input({2, 3, h}, gen)},
                     [](const std::vector<Tensor>& x) { return sru_sequence(x[0], x[1], Tensor(), Tensor(), false); }});
    cases.push_back({"reverse, transposed u",
                     {input({2, 3 * h, 3}, gen), input({2, 3, h}, gen), input({2 * h}, gen)},
                     [](const std::vector<Tensor>& x) {
                       const Tensor m = samples::like(samples::length_mask({3, 2}, 3), x[0]);
                       return sru_sequence(transpose(x[0], 1, 2), x[1], x[2], m, true);
                     },
                     true});
    return cases;
  }));
}

}  // namespace attn
