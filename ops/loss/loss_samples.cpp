// Gradcheck samples of the losses. Targets, class weights and KL target
// distributions are data captured by the case, not checked inputs.
#include "attn/ops/loss/loss_label_smoothing.h"
#include "attn/ops/loss/loss.h"
#include "attn/ops/registry.h"

namespace attn {

namespace {

OpSpec cross_entropy_spec() {
  return op_spec("cross_entropy", "loss", [] {
    Generator gen(51);
    auto with = [](Tensor target, CrossEntropyOptions options) {
      return [target, options](const std::vector<Tensor>& in) {
        CrossEntropyOptions o = options;
        if (o.class_weights.defined()) o.class_weights = samples::like(o.class_weights, in[0]);
        return cross_entropy(in[0], samples::like(target, in[0]), o);
      };
    };
    std::vector<OpCase> cases;
    cases.push_back({"3x5 mean", {samples::input({3, 5}, gen, -2, 2)}, with(from_indices({0, 3, 4}, {3}), {})});

    CrossEntropyOptions weighted;
    weighted.class_weights = from_vector({0.5, 1.0, 2.0, 1.5, 0.8}, {5}, DType::F64);
    weighted.ignore_index = -1;
    cases.push_back({"4x5 class weights, one ignored target, mean",
                     {samples::input({4, 5}, gen, -2, 2)},
                     with(from_indices({1, -1, 4, 2}, {4}), weighted)});

    CrossEntropyOptions none;
    none.reduction = Reduction::None;
    cases.push_back({"2x3x5 reduction none", {samples::input({2, 3, 5}, gen, -2, 2)},
                     with(from_indices({0, 1, 2, 3, 4, 2}, {2, 3}), none)});

    CrossEntropyOptions summed;
    summed.reduction = Reduction::Sum;
    cases.push_back({"transposed 4x5 sum", {samples::transposed_input({4, 5}, gen, -2, 2)},
                     with(from_indices({4, 0, 2, 1}, {4}), summed)});
    return cases;
  });
}

OpSpec mse_spec() {
  return op_spec("mse_loss", "loss", [] {
    Generator gen(52);
    auto with = [](Reduction r) {
      return [r](const std::vector<Tensor>& in) { return mse_loss(in[0], in[1], r); };
    };
    std::vector<OpCase> cases;
    cases.push_back({"3x4 mean", {samples::input({3, 4}, gen), samples::input({3, 4}, gen)}, with(Reduction::Mean)});
    cases.push_back({"transposed pred 3x4 sum", {samples::transposed_input({3, 4}, gen), samples::input({3, 4}, gen)},
                     with(Reduction::Sum)});
    cases.push_back({"2x3 none", {samples::input({2, 3}, gen), samples::input({2, 3}, gen)}, with(Reduction::None)});
    return cases;
  });
}

OpSpec kl_div_spec() {
  return op_spec("kl_div", "loss", [] {
    Generator gen(53);
    // Rows are proper distributions; exact zeros must contribute 0 and no NaN.
    Tensor target = from_vector({0.1, 0.2, 0.3, 0.4, 0.0, 0.5, 0.25, 0.25, 0.7, 0.0, 0.3, 0.0}, {3, 4}, DType::F64);
    auto with = [target](Reduction r) {
      return [target, r](const std::vector<Tensor>& in) { return kl_div(in[0], samples::like(target, in[0]), r); };
    };
    std::vector<OpCase> cases;
    cases.push_back({"3x4 batchmean", {samples::input({3, 4}, gen, -3, -0.2)}, with(Reduction::Mean)});
    cases.push_back({"transposed 3x4 sum", {samples::transposed_input({3, 4}, gen, -3, -0.2)}, with(Reduction::Sum)});
    cases.push_back({"3x4 none", {samples::input({3, 4}, gen, -3, -0.2)}, with(Reduction::None)});
    return cases;
  });
}

}  // namespace

void register_loss_samples(OpRegistry& r) {
  r.add(cross_entropy_spec());
  r.add(mse_spec());
  r.add(kl_div_spec());
  register_label_smoothing_samples(r);
}

}  // namespace attn
