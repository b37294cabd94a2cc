// DiSA / DiSAN and source2token: gradcheck end to end, padding invariance,
// direction masks, empty sequences.
#include <gtest/gtest.h>

#include <cmath>

#include "attn/engine/copy.h"
#include "attn/models/disa.h"
#include "attn/models/disan.h"
#include "attn/models/source2token.h"
#include "attn/ops/binary/binary.h"
#include "attn/ops/matmul/matmul.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/ops/softmax/softmax.h"
#include "attn/ops/view/view.h"
#include "model_checks.h"
#include "test_util.h"

namespace attn {
namespace {

using namespace testing_support;

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

// score_terms computes each term on the rows that take part in a pair only
// (here a third of the query rows and a quarter of the key rows take part
// in none): those rows equal the dense products, the others are 0, and the
// gradients equal the dense ones for a loss that reads the used rows only.
TEST(Disa, ScoreTermsSkipRowsOutsideEveryPair) {
  const int64_t B = 2, n = 6, d = 4;
  Tensor mask = zeros({B, n, n}, DType::U8);
  auto allow = [&](int64_t b, int64_t i, int64_t j) { mask.data<uint8_t>()[(b * n + i) * n + j] = 1; };
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < 4; ++i)                       // query rows 4 and 5 take part in no pair
      for (int64_t j = 1; j < 6; j += 2) allow(b, i, j);  // key rows 0, 2 and 4 neither
  allow(1, 0, 0);                                         // except key row 0 of the second example
  Generator gen(41);
  Tensor h = random_input({B, n, d}, 42), w1 = random_input({d, d}, 43), w2 = random_input({d, d}, 44);
  Tensor bias = random_input({d}, 45);
  const Tensor pairs = cast(mask, DType::F64);
  Tensor q_used = reshape(sum(pairs, {2}), {B, n, 1});
  Tensor k_used = reshape(sum(pairs, {1}), {B, n, 1});
  q_used = cast(gt(q_used, zeros({}, DType::F64)), DType::F64);
  k_used = cast(gt(k_used, zeros({}, DType::F64)), DType::F64);
  Tensor wq = rand_uniform({B, n, d}, -1, 1, gen, DType::F64), wk = rand_uniform({B, n, d}, -1, 1, gen, DType::F64);
  auto grads = [&](const Tensor& q, const Tensor& k) {
    for (Tensor* t : {&h, &w1, &w2, &bias}) t->zero_grad();
    sum(q * wq * q_used + k * wk * k_used).backward();
    return std::vector<Tensor>{h.grad(), w1.grad(), w2.grad(), bias.grad()};
  };
  const ScoreTerms skipped = score_terms(h, w1, bias, w2, mask);
  const std::vector<Tensor> g_skipped = grads(skipped.query, skipped.key);
  const Tensor dense_q = linear(h, w1, bias), dense_k = linear(h, w2);
  const std::vector<Tensor> g_dense = grads(dense_q, dense_k);
  // The same float64 products of d terms; the gradients sum the same terms
  // in another order (at most B n of size <= 1 each).
  EXPECT_LT(testing_support::max_abs_diff(skipped.query, dense_q * q_used), 1e-14);
  EXPECT_LT(testing_support::max_abs_diff(skipped.key, dense_k * k_used), 1e-14);
  EXPECT_EQ(testing_support::max_abs(skipped.query * (1.0 - q_used)), 0.0);
  EXPECT_EQ(testing_support::max_abs(skipped.key * (1.0 - k_used)), 0.0);
  for (size_t i = 0; i < g_dense.size(); ++i) {
    EXPECT_LT(testing_support::max_abs_diff(g_skipped[i], g_dense[i]), 1e-13) << i;
    EXPECT_GT(testing_support::max_abs(g_skipped[i]), 1e-3) << i;
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
