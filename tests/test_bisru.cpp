// The Bi-SRU baseline (models/bisru.h): float64 gradcheck end to end with
// padding, empty and one-token sentences; padding invariance; each direction
// sees only its side of the sentence; the relu projection is the highway
// input whatever the input width; float32 finite at inputs of 1e30.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "attn/engine/copy.h"
#include "attn/models/bisru.h"
#include "attn/ops/binary/binary.h"
#include "attn/ops/reduce/reduce.h"
#include "model_checks.h"
#include "test_util.h"

namespace attn {
namespace {

using namespace testing_support;

// Input width 3, hidden 2: the highway goes through the projection.
TEST(BiSru, GradcheckAllParametersAndInputsWithPaddingEmptyAndOneToken) {
  Generator gen(11);
  BiSru model(3, 2, Activation::Elu, gen, DType::F64);
  // Nonzero biases, so their gradients are checked away from the zeros they start at.
  Generator g(12);
  for (auto& [name, p] : model.named_parameters())
    if (name == "fw.b" || name == "bw.b" || name == "proj.bias")
      for (int64_t i = 0; i < p.numel(); ++i) write_element(p, i, g.uniform(-0.5, 0.5));
  Tensor x = random_input({3, 4, 3}, 12);
  Tensor mask = length_mask({4, 1, 0}, 4);
  expect_gradcheck(model, x, [&] { return flat_outputs(model.encode(x, mask)); });
}

TEST(BiSru, PaddedPositionsChangeNoValidOutput) {
  Generator gen(13);
  BiSru model(3, 4, Activation::Relu, gen, DType::F64);
  expect_padding_invariant(model, random_input({3, 5, 3}, 14), length_mask({5, 2, 0}, 5));
}

// The forward half of token t reads tokens 0..t, the backward half tokens
// t..len-1: editing token 2 of 5 moves the forward half only from token 2 on
// and the backward half only up to token 2.
TEST(BiSru, EachDirectionSeesItsSideOnly) {
  Generator gen(15);
  const int64_t H = 3, n = 5, edit = 2;
  BiSru model(2, H, Activation::Relu, gen, DType::F64);
  Tensor x = random_input({1, n, 2}, 16).detach();
  Tensor mask = length_mask({n}, n);
  const Tensor a = model.encode(x, mask).tokens;
  Tensor changed = clone(x);
  write_element(changed, edit * 2, 2.5);
  write_element(changed, edit * 2 + 1, -1.5);
  const Tensor b = model.encode(changed, mask).tokens;
  expect_each_direction_sees_its_side(a, b, edit, H);
  // The recurrence carries the edit on: the forward half of a later token
  // moves too (c remembers it through f).
  double moved_later = 0;
  for (int64_t t = edit + 1; t < n; ++t)
    for (int64_t j = 0; j < H; ++j) moved_later += std::abs(a.at({0, t, j}) - b.at({0, t, j}));
  EXPECT_GT(moved_later, 1e-9);
}

// Outputs stay finite at any finite input: the projections are at most a
// few |x| (3.4e38 leaves room at 1e30), the gates saturate, and tanh(c) is
// bounded. Gradients are not bounded that way: a readout weight's gradient
// is a product of two activations, each proportional to |x|, so its exact
// value passes float32's 3.4e38 beyond |x| ~ 1e18 (and an overflow there is
// the right float32 answer, not a fault). They are checked at 1e15.
TEST(BiSru, Float32FiniteAtHugeInputs) {
  Generator gen(17);
  BiSru model(4, 3, Activation::Relu, gen, DType::F32);
  for (double big : {1e30, -1e30, 1e15, -1e15}) {
    const bool with_gradients = std::abs(big) < 1e18;
    Tensor x = full({3, 6, 4}, big, DType::F32).set_requires_grad(with_gradients);
    EncoderOutput o = model.encode(x, length_mask({6, 1, 0}, 6));
    for (double v : o.tokens.to_vector()) ASSERT_TRUE(std::isfinite(v)) << big;
    for (double v : o.sentence.to_vector()) ASSERT_TRUE(std::isfinite(v)) << big;
    if (!with_gradients) continue;
    (sum(o.tokens) + sum(o.sentence)).backward();
    for (const Tensor& p : model.parameters())
      for (double v : p.grad().to_vector()) ASSERT_TRUE(std::isfinite(v)) << big;
    for (const Tensor& p : model.parameters()) p.zero_grad();
  }
}

TEST(BiSru, RegisteredWithItsTableAndParameterNames) {
  const EncoderInfo* info = find_encoder("bisru");
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->config_keys().find("hidden")->default_value, "300");
  EXPECT_TRUE(info->in_efficiency_study);
  Generator gen(19);
  BiSru model(5, 3, Activation::Relu, gen, DType::F32);
  std::map<std::string, Shape> shapes;
  for (auto& [name, p] : model.named_parameters()) shapes[name] = p.shape();
  EXPECT_EQ(shapes.at("proj.weight"), Shape({3, 5}));
  EXPECT_EQ(shapes.at("proj.bias"), Shape({3}));
  for (const char* d : {"fw", "bw"}) {
    EXPECT_EQ(shapes.at(std::string(d) + ".w"), Shape({9, 3})) << d;
    EXPECT_EQ(shapes.at(std::string(d) + ".b"), Shape({6})) << d;
  }
  EXPECT_EQ(model.token_dim(), 6);
  EXPECT_EQ(model.sentence_dim(), 6);
}

}  // namespace
}  // namespace attn
