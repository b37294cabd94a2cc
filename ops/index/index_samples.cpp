// Gradcheck samples of the index family. Indices repeat on purpose, so the
// accumulation of several gradient contributions into one element is checked;
// outputs are multiplied by a fixed ramp so every contribution is distinct.
#include "attn/ops/index/index.h"
#include "attn/ops/registry.h"

namespace attn {

void register_index_samples(OpRegistry& r) {
  using samples::times_ramp;
  r.add(op_spec("index_select", "index", [] {
    Generator gen(51);
    Tensor rows = from_indices({2, 0, 2}, {3});
    Tensor cols = from_indices({1, 3, 1, 0, 1}, {5});
    OpCase axis0{"repeated rows of a transposed [3, 4]",
                 {samples::transposed_input({3, 4}, gen)},
                 [rows](const std::vector<Tensor>& in) {
                   return times_ramp(index_select(in[0], 0, samples::like(rows, in[0])));
                 }};
    OpCase axis1{"repeated columns of [2, 4, 2] along axis 1",
                 {samples::input({2, 4, 2}, gen)},
                 [cols](const std::vector<Tensor>& in) {
                   return times_ramp(index_select(in[0], 1, samples::like(cols, in[0])));
                 }};
    return std::vector<OpCase>{axis0, axis1};
  }));
  r.add(op_spec("index_add", "index", [] {
    Generator gen(57);
    Tensor rows = from_indices({2, 0, 2}, {3});
    Tensor cols = from_indices({1, 3, 1}, {3});
    OpCase axis0{"repeated rows of [3, 2] into a transposed [4, 2]",
                 {samples::transposed_input({4, 2}, gen), samples::input({3, 2}, gen)},
                 [rows](const std::vector<Tensor>& in) {
                   return times_ramp(index_add(in[0], 0, samples::like(rows, in[0]), in[1]));
                 },
                 true};
    OpCase axis1{"repeated columns of [2, 3, 2] into [2, 4, 2] along axis 1",
                 {samples::input({2, 4, 2}, gen), samples::input({2, 3, 2}, gen)},
                 [cols](const std::vector<Tensor>& in) {
                   return times_ramp(index_add(in[0], 1, samples::like(cols, in[0]), in[1]));
                 }};
    return std::vector<OpCase>{axis0, axis1};
  }));
  r.add(op_spec("embedding", "index", [] {
    Generator gen(52);
    Tensor ids = from_indices({1, 4, 1, 0, 1, 3}, {2, 3});
    OpCase table{
        "2-D ids with repeats into [5, 3]", {samples::input({5, 3}, gen)}, [ids](const std::vector<Tensor>& in) {
          return times_ramp(embedding(in[0], samples::like(ids, in[0])));
        }};
    OpCase transposed{"1-D ids into a transposed [4, 3]",
                      {samples::transposed_input({4, 3}, gen)},
                      [](const std::vector<Tensor>& in) {
                        return times_ramp(embedding(in[0], samples::like(from_indices({3, 3, 0, 2}, {4}), in[0])));
                      }};
    return std::vector<OpCase>{table, transposed};
  }));
  r.add(op_spec("gather", "index", [] {
    Generator gen(53);
    Tensor along1 = from_indices({0, 3, 3, 2, 1, 0, 1, 1, 2}, {3, 3});
    Tensor along0 = from_indices({2, 0, 1, 2, 2, 0}, {2, 3});
    OpCase last{"axis 1 of [3, 4], repeats", {samples::input({3, 4}, gen)}, [along1](const std::vector<Tensor>& in) {
                  return times_ramp(gather(in[0], 1, samples::like(along1, in[0])));
                }};
    OpCase first{
        "axis 0 of a transposed [3, 4], index narrower off axis",
        {samples::transposed_input({3, 4}, gen)},
        [along0](const std::vector<Tensor>& in) { return times_ramp(gather(in[0], 0, samples::like(along0, in[0]))); }};
    return std::vector<OpCase>{last, first};
  }));
  r.add(op_spec("scatter_add", "index", [] {
    Generator gen(54);
    Tensor along0 = from_indices({2, 0, 2, 1, 2, 0, 0, 2}, {2, 4});
    Tensor along1 = from_indices({1, 1, 0, 2, 0, 0}, {2, 3});
    OpCase rows{"src [2, 4] into base [3, 4] along axis 0, repeats",
                {samples::input({3, 4}, gen), samples::input({2, 4}, gen)},
                [along0](const std::vector<Tensor>& in) {
                  return times_ramp(scatter_add(in[0], 0, samples::like(along0, in[0]), in[1]));
                }};
    OpCase cols{"transposed src [3, 4] larger than index, along axis 1",
                {samples::input({2, 3}, gen), samples::transposed_input({3, 4}, gen)},
                [along1](const std::vector<Tensor>& in) {
                  return times_ramp(scatter_add(in[0], 1, samples::like(along1, in[0]), in[1]));
                }};
    return std::vector<OpCase>{rows, cols};
  }));
}

}  // namespace attn
