// Gradcheck samples of the recurrent sequence op: each cell in each form and
// direction over a batch whose sentences have lengths 4, 1 and 0 (padding
// after them), all tokens valid without a mask, and a transposed xw.
#include "attn/ops/recurrent/recurrent.h"
#include "attn/ops/registry.h"
#include "attn/ops/view/view.h"

namespace attn {

namespace {

struct Variant {
  const char* label;
  RecurrentCell cell;
  CellForm form;
  bool reverse;
};

}  // namespace

void register_recurrent_samples(OpRegistry& r) {
  r.add(op_spec("recurrent_sequence", "recurrent", [] {
    Generator gen(431);
    using samples::input;
    const int64_t B = 3, n = 4, h = 2;
    const Tensor mask = samples::length_mask({4, 1, 0}, n);
    const Variant variants[] = {
        {"lstm tensorflow", RecurrentCell::Lstm, CellForm::TensorFlow, false},
        {"lstm tensorflow reverse", RecurrentCell::Lstm, CellForm::TensorFlow, true},
        {"lstm pytorch", RecurrentCell::Lstm, CellForm::PyTorch, false},
        {"lstm pytorch reverse", RecurrentCell::Lstm, CellForm::PyTorch, true},
        {"gru tensorflow", RecurrentCell::Gru, CellForm::TensorFlow, false},
        {"gru tensorflow reverse", RecurrentCell::Gru, CellForm::TensorFlow, true},
        {"gru pytorch", RecurrentCell::Gru, CellForm::PyTorch, false},
        {"gru pytorch reverse", RecurrentCell::Gru, CellForm::PyTorch, true},
    };
    std::vector<OpCase> cases;
    for (const Variant& v : variants) {
      const int64_t G = recurrent_gate_blocks(v.cell) * h;
      const bool torch = v.form == CellForm::PyTorch;
      std::vector<Tensor> in{input({B, n, G}, gen, -1.5, 1.5), input({h, G}, gen)};
      if (torch) in.push_back(input({G}, gen));
      cases.push_back({std::string(v.label) + ", lengths 4, 1, 0", in, [v, mask, torch](const std::vector<Tensor>& x) {
                         return recurrent_sequence(x[0], x[1], torch ? x[2] : Tensor(), samples::like(mask, x[0]),
                                                   v.cell, v.form, v.reverse);
                       }});
    }
    // No mask (every token valid), and xw read through a transpose.
    cases.push_back({"gru pytorch, no mask", {input({2, 3, 3 * h}, gen), input({h, 3 * h}, gen)},
                     [](const std::vector<Tensor>& x) {
                       return recurrent_sequence(x[0], x[1], Tensor(), Tensor(), RecurrentCell::Gru,
                                                 CellForm::PyTorch, false);
                     }});
    cases.push_back({"lstm tensorflow reverse, transposed xw",
                     {input({2, 4 * h, 3}, gen), input({h, 4 * h}, gen)},
                     [](const std::vector<Tensor>& x) {
                       const Tensor m = samples::like(samples::length_mask({3, 2}, 3), x[0]);
                       return recurrent_sequence(transpose(x[0], 1, 2), x[1], Tensor(), m, RecurrentCell::Lstm,
                                                 CellForm::TensorFlow, true);
                     },
                     true});
    return cases;
  }));
}

}  // namespace attn
