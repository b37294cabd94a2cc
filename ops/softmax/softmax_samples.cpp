// Gradcheck samples of softmax and log_softmax: the last axis, a leading and a
// middle axis (softmax's column kernels; log_softmax's permuted layout), a
// transposed input, and masks broadcast from [B, 1, L], [B, n, 1], [1, n, L]
// and [L], some of which mask whole rows or columns (their gradient is 0,
// the others' is not).
#include "attn/ops/registry.h"
#include "attn/ops/softmax/softmax.h"

namespace attn {

namespace {

using SoftmaxFnRef = Tensor (*)(const Tensor&, int64_t, const Tensor&);

OpSpec softmax_spec(const std::string& name, SoftmaxFnRef f) {
  return op_spec(name, "softmax", [f] {
    Generator gen(41);
    auto along = [f](int64_t axis, Tensor mask = Tensor()) {
      return [f, axis, mask](const std::vector<Tensor>& in) { return f(in[0], axis, mask.defined() ? samples::like(mask, in[0]) : mask); };
    };
    std::vector<OpCase> cases;
    cases.push_back({"3x4 axis -1", {samples::input({3, 4}, gen, -2, 2)}, along(-1)});
    cases.push_back({"3x4 axis 0", {samples::input({3, 4}, gen, -2, 2)}, along(0)});
    cases.push_back({"2x3x4 middle axis 1", {samples::input({2, 3, 4}, gen, -2, 2)}, along(1)});
    cases.push_back({"transposed 3x4 axis -1", {samples::transposed_input({3, 4}, gen, -2, 2)}, along(-1)});

    // [B, 1, L] mask: batch 0 masks one key, batch 1 masks every key (all its
    // rows are empty). A huge value at a masked position must not leak.
    Tensor x = samples::input({2, 3, 4}, gen, -2, 2);
    write_element(x, 2, 1e30);
    Tensor batch_mask = samples::u8_mask({1, 1, 0, 1, 0, 0, 0, 0}, {2, 1, 4});
    OpCase masked{"2x3x4 mask [2,1,4] with fully masked rows", {x}, along(-1, batch_mask), true};
    cases.push_back(masked);

    // A middle axis (ops/softmax/softmax_columns_cpu.cpp) with source2token's mask
    // [B, n, 1] (batch 1 fully masked), and with a per-feature mask.
    Tensor xm = samples::input({2, 3, 4}, gen, -2, 2);
    write_element(xm, 5, 1e30);  // batch 0, row 1: masked below
    Tensor row_mask = samples::u8_mask({1, 0, 1, 0, 0, 0}, {2, 3, 1});
    cases.push_back({"2x3x4 middle axis 1, mask [2,3,1]", {xm}, along(1, row_mask), true});
    Tensor feature_mask = samples::u8_mask({1, 0, 1, 1, 0, 1, 1, 0, 1, 1, 0, 0}, {1, 3, 4});
    cases.push_back({"2x3x4 middle axis 1, mask [1,3,4]", {samples::input({2, 3, 4}, gen, -2, 2)},
                     along(1, feature_mask), true});

    Tensor key_mask = samples::u8_mask({1, 0, 1, 1}, {4});
    OpCase keys{"3x4 mask [4]", {samples::input({3, 4}, gen, -2, 2)}, along(-1, key_mask), true};
    cases.push_back(keys);
    return cases;
  });
}

}  // namespace

void register_softmax_samples(OpRegistry& r) {
  r.add(softmax_spec("softmax", softmax));
  r.add(softmax_spec("log_softmax", log_softmax));
}

}  // namespace attn
