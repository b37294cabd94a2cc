// Gradcheck samples of the binary family: equal shapes, NumPy broadcasting in
// both directions, and a transposed operand.
#include "attn/ops/binary/binary.h"
#include "attn/ops/registry.h"

namespace attn {

namespace {

using BinaryFnRef = Tensor (*)(const Tensor&, const Tensor&);

// b_lo/b_hi with signed b keep divisors away from zero; distinct random reals
// keep maximum/minimum away from ties.
OpSpec binary_spec(const std::string& name, BinaryFnRef f, bool b_away_from_zero) {
  return op_spec(name, "binary", [f, b_away_from_zero] {
    Generator gen(11);
    auto b_input = [&](const Shape& shape) {
      return b_away_from_zero ? samples::signed_input(shape, gen, 0.5, 2.0) : samples::input(shape, gen);
    };
    auto fn = [f](const std::vector<Tensor>& in) { return f(in[0], in[1]); };
    std::vector<OpCase> cases;
    cases.push_back({"3x4 with 3x4", {samples::input({3, 4}, gen), b_input({3, 4})}, fn});
    cases.push_back({"2x3x4 with 4 (broadcast)", {samples::input({2, 3, 4}, gen), b_input({4})}, fn, true});
    cases.push_back({"3x1 with 1x4 (broadcast both)", {samples::input({3, 1}, gen), b_input({1, 4})}, fn, true});
    Tensor bt = b_input({3, 4});
    cases.push_back({"3x4 with transposed 3x4", {samples::transposed_input({3, 4}, gen), bt}, fn, true});
    return cases;
  });
}

Tensor random_mask(const Shape& shape, Generator& gen) {
  Tensor m = empty(shape, DType::U8);
  for (int64_t i = 0; i < m.numel(); ++i) write_element(m, i, gen.bernoulli(0.5) ? 1 : 0);
  return m;
}

}  // namespace

void register_binary_samples(OpRegistry& r) {
  r.add(binary_spec("add", add, false));
  r.add(binary_spec("sub", sub, false));
  r.add(binary_spec("mul", mul, false));
  r.add(binary_spec("div", div, true));
  r.add(binary_spec("maximum", maximum, false));
  r.add(binary_spec("minimum", minimum, false));

  r.add(op_spec("where", "binary", [] {
    Generator gen(12);
    Tensor cond = random_mask({3, 4}, gen);
    Tensor cond_col = random_mask({3, 1}, gen);
    std::vector<OpCase> cases;
    cases.push_back({"3x4", {samples::input({3, 4}, gen), samples::input({3, 4}, gen)},
                     [cond](const std::vector<Tensor>& in) { return where(samples::like(cond, in[0]), in[0], in[1]); }});
    cases.push_back({"mask 3x1, a 3x4, b 4 (broadcast)", {samples::input({3, 4}, gen), samples::input({4}, gen)},
                     [cond_col](const std::vector<Tensor>& in) { return where(samples::like(cond_col, in[0]), in[0], in[1]); }, true});
    return cases;
  }));

  r.add(op_spec("masked_fill", "binary", [] {
    Generator gen(13);
    Tensor mask = random_mask({3, 4}, gen);
    Tensor row_mask = random_mask({4}, gen);
    std::vector<OpCase> cases;
    cases.push_back({"3x4", {samples::input({3, 4}, gen)},
                     [mask](const std::vector<Tensor>& in) { return masked_fill(in[0], samples::like(mask, in[0]), -5.0); }});
    cases.push_back({"mask 4 broadcast over 2x3x4", {samples::input({2, 3, 4}, gen)},
                     [row_mask](const std::vector<Tensor>& in) { return masked_fill(in[0], samples::like(row_mask, in[0]), 0.0); }, true});
    // Nothing masked: on the CPU masked_fill hands back its input (ops/binary/binary.cpp).
    Tensor none = zeros({3, 1}, DType::U8);
    cases.push_back({"nothing masked, mask 3x1", {samples::input({3, 4}, gen)},
                     [none](const std::vector<Tensor>& in) { return masked_fill(in[0], samples::like(none, in[0]), 9.0); }, true});
    return cases;
  }));
}

}  // namespace attn
