// DiSA / DiSAN and source2token: gradcheck end to end, padding invariance,
// direction masks, empty sequences.
#include <gtest/gtest.h>

#include <cmath>

#include "model_checks.h"
#include "attn/models/disan.h"
#include "attn/models/source2token.h"
#include "attn/ops/binary.h"
#include "attn/ops/reduce.h"
#include "attn/ops/softmax.h"

namespace attn {
namespace {

using testing_support::expect_gradcheck;
using testing_support::expect_padding_invariant;
using testing_support::flat_outputs;
using testing_support::random_input;

TEST(Disan, GradcheckAllParametersAndInputsWithPadding) {
  Generator gen(1);
  Disan model(3, 4, Activation::Elu, 5.0, gen, DType::F64);
  Tensor x = random_input({2, 4, 3}, 2);
  Tensor mask = length_mask({4, 2}, 4);
  expect_gradcheck(model, x, [&] { return flat_outputs(model.encode(x, mask)); });
}

TEST(Disan, PaddedPositionsChangeNoValidOutput) {
  Generator gen(3);
  Disan model(3, 4, Activation::Elu, 5.0, gen, DType::F64);
  expect_padding_invariant(model, random_input({3, 5, 3}, 4), length_mask({5, 2, 0}, 5));
}

// Forward DiSA: token i sees only tokens before it, so changing the last
// token changes no earlier output; backward DiSA the mirror image.
TEST(Disa, DirectionMasksAreCausal) {
  for (Direction dir : {Direction::Forward, Direction::Backward}) {
    Generator gen(5);
    DisaOptions o;
    o.direction = dir;
    Disa disa(3, 4, o, gen, DType::F64);
    Tensor x = random_input({1, 5, 3}, 6).detach();
    Tensor mask = length_mask({5}, 5);
    Tensor before = disa.forward(x, mask);
    Tensor changed = x.detach();
    int64_t edit = dir == Direction::Forward ? 4 : 0;
    for (int64_t k = 0; k < 3; ++k) write_element(changed, edit * 3 + k, 3.0 + k);
    Tensor after = disa.forward(changed, mask);
    for (int64_t t = 0; t < 5; ++t) {
      bool may_change = t == edit || (dir == Direction::Forward ? t > edit : t < edit);
      double diff = 0;
      for (int64_t k = 0; k < 4; ++k) diff += std::abs(before.at({0, t, k}) - after.at({0, t, k}));
      if (may_change) {
        EXPECT_GT(diff, 1e-6) << direction_name(dir) << " token " << t;
      } else {
        EXPECT_EQ(diff, 0.0) << direction_name(dir) << " token " << t;
      }
    }
  }
}

TEST(Disan, EmptySequenceGivesZerosAndFiniteGradients) {
  Generator gen(7);
  Disan model(3, 4, Activation::Elu, 5.0, gen, DType::F64);
  Tensor x = random_input({2, 3, 3}, 8);
  Tensor mask = length_mask({0, 1}, 3);  // one empty example, one with no valid key anywhere
  EncoderOutput o = model.encode(x, mask);
  for (double v : o.sentence.to_vector()) ASSERT_TRUE(std::isfinite(v));
  for (int64_t k = 0; k < 8; ++k) EXPECT_EQ(o.sentence.at({0, k}), 0.0);
  sum(o.sentence).backward();
  for (const Tensor& p : model.parameters())
    for (double v : p.grad().to_vector()) ASSERT_TRUE(std::isfinite(v));
}

TEST(Source2Token, ProbabilitiesSumToOnePerFeatureOverValidPositions) {
  Generator gen(9);
  Source2Token s2t(4, gen, Activation::Elu, true, DType::F64);
  Tensor x = random_input({2, 5, 4}, 10).detach();
  Tensor mask = length_mask({5, 3}, 5);
  Tensor p = s2t.probabilities(x, mask);
  Tensor totals = sum(p, {1});
  for (double v : totals.to_vector()) EXPECT_NEAR(v, 1.0, 1e-12);
  for (int64_t t = 3; t < 5; ++t)
    for (int64_t k = 0; k < 4; ++k) EXPECT_EQ(p.at({1, t, k}), 0.0);
  // The output is the probability-weighted sum of the tokens, per feature.
  Tensor out = s2t.forward(x, mask);
  double expected = 0;
  for (int64_t t = 0; t < 5; ++t) expected += p.at({0, t, 2}) * x.at({0, t, 2});
  EXPECT_NEAR(out.at({0, 2}), expected, 1e-12);
}

TEST(Source2Token, GradcheckOneAndTwoLayers) {
  for (bool two_layer : {true, false}) {
    Generator gen(11);
    Source2Token s2t(3, gen, Activation::Elu, two_layer, DType::F64);
    Tensor x = random_input({2, 4, 3}, 12);
    Tensor mask = length_mask({4, 2}, 4);
    expect_gradcheck(s2t, x, [&] { return s2t.forward(x, mask); });
  }
}

}  // namespace
}  // namespace attn
