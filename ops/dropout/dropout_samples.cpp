// Gradcheck samples of dropout. Each evaluation builds a fresh Generator with
// the same seed, so every call of the case function draws the same mask and
// the op is a fixed linear map the central differences can check.
#include "attn/ops/dropout/dropout.h"
#include "attn/ops/registry.h"

namespace attn {

void register_dropout_samples(OpRegistry& r) {
  OpSpec s;
  s.name = "dropout";
  s.family = "dropout";
  s.cases = [] {
    Generator gen(51);
    auto fn = [](const std::vector<Tensor>& in) {
      Generator mask_gen(2024);
      return dropout(in[0], 0.3, mask_gen);
    };
    // 48 elements at p = 0.3: both dropped and kept elements are all but certain
    // (tests/test_norm_dropout.cpp checks these seeds give both).
    return std::vector<OpCase>{{"6x8 p=0.3", {samples::input({6, 8}, gen)}, fn},
                               {"transposed 6x8 p=0.3", {samples::transposed_input({6, 8}, gen)}, fn}};
  };
  r.add(s);
}

}  // namespace attn
