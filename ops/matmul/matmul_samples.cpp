// Gradcheck samples of the matmul family: plain, transposed operands (read by
// BLAS through trans flags), batched, broadcast batches, a per-head b shared
// over the batch (its gradient stacks the batch's rows: copied, or read in
// place from heads split off one feature axis) and vector operands;
// matmul_sum over row views of one per-head weight (with and without a
// per-head bias) and over three terms; matmul_bias with a per-head bias, a
// bias of the columns only and a relu;
// linear with and without bias, over 3-D inputs and a transposed weight;
// linear_relu with and without bias;
// linear_sum over column views of one weight and over three terms;
// the plain call forms that end in an unfused activation or take
// concatenated inputs (ops/matmul/matmul.h).
#include "attn/ops/matmul/matmul.h"
#include "attn/ops/matmul/matmul_fused.h"
#include "attn/ops/registry.h"
#include "attn/ops/view/view.h"

namespace attn {

void register_matmul_samples(OpRegistry& r) {
  r.add(op_spec("matmul", "matmul", [] {
    Generator gen(41);
    auto fn = [](const std::vector<Tensor>& in) { return matmul(in[0], in[1]); };
    using samples::input;
    using samples::transposed_input;
    std::vector<OpCase> cases;
    cases.push_back({"3x4 @ 4x2", {input({3, 4}, gen), input({4, 2}, gen)}, fn});
    cases.push_back({"transposed 3x4 @ 4x2", {transposed_input({3, 4}, gen), input({4, 2}, gen)}, fn});
    cases.push_back({"3x4 @ transposed 4x2", {input({3, 4}, gen), transposed_input({4, 2}, gen)}, fn});
    cases.push_back({"2x3x4 @ 2x4x2", {input({2, 3, 4}, gen), transposed_input({2, 4, 2}, gen)}, fn});
    cases.push_back({"2x1x3x4 @ 3x4x2 (broadcast batch)", {input({2, 1, 3, 4}, gen), input({3, 4, 2}, gen)}, fn, true});
    cases.push_back({"2x3x4x5 @ 3x5x2 (per-head b shared over the batch)",
                     {input({2, 3, 4, 5}, gen), input({3, 5, 2}, gen)},
                     fn,
                     true});
    auto split_heads = [](const std::vector<Tensor>& in) {
      return matmul(permute(reshape(in[0], {2, 4, 3, 5}), {0, 2, 1, 3}), in[1]);
    };
    cases.push_back({"heads of 2x4x15 split to 2x3x4x5 @ 3x5x2 (shared b, rows read in place)",
                     {input({2, 4, 15}, gen), input({3, 5, 2}, gen)},
                     split_heads,
                     true});
    cases.push_back({"2x3x4 @ 4x2 (shared b)", {input({2, 3, 4}, gen), input({4, 2}, gen)}, fn, true});
    cases.push_back({"3x4 @ 2x4x2 (shared a)", {transposed_input({3, 4}, gen), input({2, 4, 2}, gen)}, fn, true});
    cases.push_back({"2x3x4 @ 4 (vector b)", {input({2, 3, 4}, gen), input({4}, gen)}, fn, true});
    cases.push_back({"4 @ 4x3 (vector a)", {input({4}, gen), input({4, 3}, gen)}, fn});
    return cases;
  }));

  r.add(op_spec("matmul_sum", "matmul", [] {
    Generator gen(45);
    using samples::input;
    std::vector<OpCase> cases;
    // MTSA's gate: [v | h] @ W per head, W's rows split between the terms.
    auto row_views = [](const std::vector<Tensor>& in) {
      return matmul_sum({in[0], in[1]}, {narrow(in[2], 1, 0, 5), narrow(in[2], 1, 5, 4)});
    };
    cases.push_back({"2x3x4x5 and 2x3x4x4, row views of a per-head 3x9x2",
                     {input({2, 3, 4, 5}, gen), input({2, 3, 4, 4}, gen), input({3, 9, 2}, gen)},
                     row_views,
                     true});
    auto row_views_bias = [](const std::vector<Tensor>& in) {
      return matmul_sum({in[0], in[1]}, {narrow(in[2], 1, 0, 5), narrow(in[2], 1, 5, 4)}, in[3]);
    };
    cases.push_back({"2x3x4x5 and 2x3x4x4, row views of a per-head 3x9x2, per-head bias 3x1x2",
                     {input({2, 3, 4, 5}, gen), input({2, 3, 4, 4}, gen), input({3, 9, 2}, gen), input({3, 1, 2}, gen)},
                     row_views_bias,
                     true});
    auto three_terms = [](const std::vector<Tensor>& in) {
      return matmul_sum({in[0], in[1], in[2]}, {in[3], in[4], in[5]});
    };
    cases.push_back({"three terms: broadcast batch, transposed a, shared b",
                     {input({2, 1, 3, 4}, gen), samples::transposed_input({2, 3, 3, 2}, gen), input({2, 3, 3, 4}, gen),
                      input({3, 4, 2}, gen), input({2, 3, 2, 2}, gen), input({4, 2}, gen)},
                     three_terms,
                     true});
    return cases;
  }));

  r.add(op_spec("matmul_bias", "matmul", [] {
    Generator gen(51);
    using samples::input;
    using samples::signed_input;
    auto plain = [](const std::vector<Tensor>& in) { return matmul_bias(in[0], in[1], in[2]); };
    auto relu = [](const std::vector<Tensor>& in) { return matmul_bias(in[0], in[1], in[2], true); };
    std::vector<OpCase> cases;
    cases.push_back({"2x3x4x5 @ per-head 3x5x2, per-head bias 3x1x2",
                     {input({2, 3, 4, 5}, gen), input({3, 5, 2}, gen), input({3, 1, 2}, gen)},
                     plain,
                     true});
    cases.push_back({"transposed 3x4 @ 2x4x2, bias 2 (columns only)",
                     {samples::transposed_input({3, 4}, gen), input({2, 4, 2}, gen), input({2}, gen)},
                     plain,
                     true});
    // Signed inputs: about half the outputs are cut off by the relu, half pass.
    cases.push_back({"relu: 2x3x4x5 @ per-head 3x5x2, per-head bias 3x1x2",
                     {signed_input({2, 3, 4, 5}, gen, 0.2, 1.5), signed_input({3, 5, 2}, gen, 0.2, 1.5),
                      signed_input({3, 1, 2}, gen, 0.2, 1.5)},
                     relu,
                     true});
    return cases;
  }));

  r.add(op_spec("linear", "matmul", [] {
    Generator gen(43);
    auto with_bias = [](const std::vector<Tensor>& in) { return linear(in[0], in[1], in[2]); };
    auto no_bias = [](const std::vector<Tensor>& in) { return linear(in[0], in[1]); };
    using samples::input;
    std::vector<OpCase> cases;
    cases.push_back({"3x4, W 5x4, b 5", {input({3, 4}, gen), input({5, 4}, gen), input({5}, gen)}, with_bias, true});
    cases.push_back({"3x4, W 5x4, no bias", {input({3, 4}, gen), input({5, 4}, gen)}, no_bias});
    cases.push_back(
        {"2x3x4, W 5x4, b 5", {input({2, 3, 4}, gen), input({5, 4}, gen), input({5}, gen)}, with_bias, true});
    cases.push_back({"transposed x 3x4, transposed W 5x4, b 5",
                     {samples::transposed_input({3, 4}, gen), samples::transposed_input({5, 4}, gen), input({5}, gen)},
                     with_bias,
                     true});
    return cases;
  }));

  r.add(op_spec("linear_relu", "matmul", [] {
    Generator gen(49);
    using samples::signed_input;
    auto with_bias = [](const std::vector<Tensor>& in) { return linear_relu(in[0], in[1], in[2]); };
    auto no_bias = [](const std::vector<Tensor>& in) { return linear_relu(in[0], in[1]); };
    // Signed inputs: about half the outputs are cut off, half pass.
    std::vector<OpCase> cases;
    cases.push_back({"2x3x4, W 5x4, b 5",
                     {signed_input({2, 3, 4}, gen, 0.2, 1.5), signed_input({5, 4}, gen, 0.2, 1.5),
                      signed_input({5}, gen, 0.2, 1.5)},
                     with_bias,
                     true});
    cases.push_back(
        {"6x4, W 5x4, no bias", {signed_input({6, 4}, gen, 0.2, 1.5), signed_input({5, 4}, gen, 0.2, 1.5)}, no_bias});
    return cases;
  }));

  r.add(op_spec("linear_sum", "matmul", [] {
    Generator gen(47);
    using samples::input;
    std::vector<OpCase> cases;
    // The fusion gates' use: [x1; x2] against column views of one weight.
    auto column_views = [](const std::vector<Tensor>& in) {
      return linear_sum({in[0], in[1]}, {narrow(in[2], 1, 0, 4), narrow(in[2], 1, 4, 3)}, in[3]);
    };
    cases.push_back({"2x3x4 and 2x3x3, column views of W 5x7, b 5",
                     {input({2, 3, 4}, gen), input({2, 3, 3}, gen), input({5, 7}, gen), input({5}, gen)},
                     column_views,
                     true});
    auto three_terms = [](const std::vector<Tensor>& in) {
      return linear_sum({in[0], in[1], in[2]}, {in[3], in[4], in[5]});
    };
    cases.push_back({"three terms, one transposed x, no bias",
                     {input({3, 4}, gen), samples::transposed_input({3, 2}, gen), input({3, 4}, gen),
                      input({5, 4}, gen), input({5, 2}, gen), samples::transposed_input({5, 4}, gen)},
                     three_terms,
                     true});
    return cases;
  }));

  // The plain call forms of ops/matmul/matmul.h beyond the ones above: an
  // activation after the fused product, concatenated inputs (the weight
  // split by the op, or given as blocks) and a product with a bias and an
  // activation.
  r.add(op_spec("plain_products", "matmul", [] {
    Generator gen(53);
    using samples::input;
    using samples::signed_input;
    std::vector<OpCase> cases;
    auto elu_after = [](const std::vector<Tensor>& in) { return linear(in[0], in[1], in[2], Activation::Elu); };
    cases.push_back({"linear, elu: 2x3x4, W 5x4, b 5", {input({2, 3, 4}, gen), input({5, 4}, gen), input({5}, gen)},
                     elu_after,
                     true});
    // Signed inputs: about half the outputs are cut off by the relu, half pass.
    auto concat_relu = [](const std::vector<Tensor>& in) {
      return linear(Concat({in[0], in[1]}), in[2], in[3], Activation::Relu);
    };
    cases.push_back({"linear over [2x3x4 | 2x3x3], W 5x7 split by the op, b 5, relu",
                     {signed_input({2, 3, 4}, gen, 0.2, 1.5), signed_input({2, 3, 3}, gen, 0.2, 1.5),
                      signed_input({5, 7}, gen, 0.2, 1.5), signed_input({5}, gen, 0.2, 1.5)},
                     concat_relu,
                     true});
    auto blocks_tanh = [](const std::vector<Tensor>& in) {
      return linear(Concat({in[0], in[1]}), Concat({in[2], in[3]}), in[4], Activation::Tanh);
    };
    cases.push_back({"linear over [3x4 | 3x2], weight blocks 5x4 and 5x2, b 5, tanh",
                     {input({3, 4}, gen), input({3, 2}, gen), input({5, 4}, gen), input({5, 2}, gen), input({5}, gen)},
                     blocks_tanh});
    auto bias_tanh = [](const std::vector<Tensor>& in) { return matmul(in[0], in[1], in[2], Activation::Tanh); };
    cases.push_back({"2x3x4x5 @ per-head 3x5x2, per-head bias 3x1x2, tanh",
                     {input({2, 3, 4, 5}, gen), input({3, 5, 2}, gen), input({3, 1, 2}, gen)},
                     bias_tanh,
                     true});
    auto no_bias_relu = [](const std::vector<Tensor>& in) {
      return matmul(in[0], in[1], Tensor(), Activation::Relu);
    };
    cases.push_back({"3x4 @ 4x5, no bias, relu",
                     {signed_input({3, 4}, gen, 0.2, 1.5), signed_input({4, 5}, gen, 0.2, 1.5)},
                     no_bias_relu});
    auto rows_sigmoid = [](const std::vector<Tensor>& in) {
      return matmul(Concat({in[0], in[1]}), in[2], in[3], Activation::Sigmoid);
    };
    cases.push_back({"[2x3x4x5 | 2x3x4x4] @ per-head 3x9x2 split by rows, per-head bias 3x1x2, sigmoid",
                     {input({2, 3, 4, 5}, gen), input({2, 3, 4, 4}, gen), input({3, 9, 2}, gen), input({3, 1, 2}, gen)},
                     rows_sigmoid,
                     true});
    return cases;
  }));
}

}  // namespace attn
