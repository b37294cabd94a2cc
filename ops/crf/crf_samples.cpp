// Gradcheck samples of the CRF NLL: sentences of lengths 4, 1 and 0 (padding,
// a one-token sentence, an all-padding row), every token valid without a
// mask, and emissions read through a transpose. Tags at padded positions are
// -100, which the op must never read. Each sentence's NLL is weighed
// differently (times_ramp), so a gradient sent to the wrong sentence shows.
#include "attn/ops/crf/crf.h"
#include "attn/ops/registry.h"
#include "attn/ops/view/view.h"

namespace attn {

void register_crf_samples(OpRegistry& r) {
  r.add(op_spec("crf_nll", "crf", [] {
    Generator gen(907);
    using samples::input;
    std::vector<OpCase> cases;
    {
      const int64_t K = 3;
      const Tensor mask = samples::length_mask({4, 1, 0}, 4);
      const Tensor tags = from_indices({0, 2, 2, 1, 1, -100, -100, -100, -100, -100, -100, -100}, {3, 4});
      cases.push_back({"lengths 4, 1, 0",
                       {input({3, 4, K}, gen, -2, 2), input({K, K}, gen), input({K}, gen), input({K}, gen)},
                       [mask, tags](const std::vector<Tensor>& x) {
                         return samples::times_ramp(crf_nll(x[0], samples::like(tags, x[0]),
                                                            samples::like(mask, x[0]), x[1], x[2], x[3]));
                       }});
    }
    {
      const int64_t K = 4;
      const Tensor tags = from_indices({3, 0, 1, 2, 2, 3}, {2, 3});
      cases.push_back({"no mask, 4 tags",
                       {input({2, 3, K}, gen, -2, 2), input({K, K}, gen), input({K}, gen), input({K}, gen)},
                       [tags](const std::vector<Tensor>& x) {
                         return samples::times_ramp(crf_nll(x[0], samples::like(tags, x[0]), Tensor(), x[1], x[2], x[3]));
                       }});
    }
    {
      const int64_t K = 2;
      const Tensor mask = samples::length_mask({3, 2}, 3);
      const Tensor tags = from_indices({1, 0, 1, 0, 0, -100}, {2, 3});
      cases.push_back({"transposed emissions, lengths 3, 2",
                       {input({2, K, 3}, gen, -2, 2), input({K, K}, gen), input({K}, gen), input({K}, gen)},
                       [mask, tags](const std::vector<Tensor>& x) {
                         return samples::times_ramp(crf_nll(transpose(x[0], 1, 2), samples::like(tags, x[0]),
                                                            samples::like(mask, x[0]), x[1], x[2], x[3]));
                       },
                       true});
    }
    return cases;
  }));
}

}  // namespace attn
