// Task heads end to end on a small DiSAN encoder with padding: float64
// gradchecks over every parameter and input, and the relatedness target and
// prediction formulas.
#include <gtest/gtest.h>

#include <cmath>

#include "attn/engine/error.h"
#include "model_checks.h"
#include "attn/models/disan.h"
#include "attn/models/heads.h"
#include "attn/ops/index/index.h"
#include "attn/ops/loss/loss.h"
#include "attn/ops/softmax/softmax.h"
#include "attn/ops/unary/unary.h"
#include "attn/ops/view/view.h"

namespace attn {
namespace {

using namespace testing_support;

// An encoder and a head as one module, so one gradcheck covers both.
struct EncoderWithHead : Module {
  EncoderWithHead(Module& encoder, Module& head) {
    register_module("encoder", encoder);
    register_module("head", head);
  }
};

struct Fixture {
  Generator init{21}, noise{22};
  Disan encoder{3, 3, Activation::Elu, 5.0, init, DType::F64};
  HeadOptions options() const {
    HeadOptions o;
    o.hidden = 4;
    o.activation = Activation::Elu;  // smooth, so finite differences never straddle a kink
    return o;
  }
};

TEST(Heads, ClassificationGradcheckWithPadding) {
  Fixture f;
  ClassificationHead head(f.encoder.sentence_dim(), 3, f.options(), f.init, f.noise, DType::F64);
  EncoderWithHead both(f.encoder, head);
  Tensor x = random_input({2, 4, 3}, 23);
  Tensor mask = length_mask({4, 2}, 4);
  expect_gradcheck(both, x, [&] { return head.forward(f.encoder.encode(x, mask).sentence); });
}

TEST(Heads, PairGradcheckWithHighwayAndSharedEncoder) {
  Fixture f;
  HeadOptions o = f.options();
  o.highway = true;
  PairHead head(f.encoder.sentence_dim(), 3, o, f.init, f.noise, DType::F64);
  EncoderWithHead both(f.encoder, head);
  Tensor x = random_input({2, 4, 3}, 24);
  Tensor premise_mask = length_mask({4, 3}, 4), hypothesis_mask = length_mask({2, 4}, 4);
  Tensor y = random_input({2, 4, 3}, 25).detach();
  expect_gradcheck(both, x, [&] {
    Tensor u = f.encoder.encode(x, premise_mask).sentence;
    Tensor v = f.encoder.encode(y, hypothesis_mask).sentence;
    return head.forward(u, v);
  });
}

TEST(Heads, PairFeaturesOfTheMultiScaleTransformer) {
  // Seed 003: concat(r1, r2, |r1 - r2|, r1 - r2). Two heads with the same
  // initial weights (same seeds) differ only in their features.
  auto head_with = [](PairFeatures features) {
    Generator init(31), noise(32);
    HeadOptions o;
    o.hidden = 4;
    o.pair_features = features;
    return PairHead(2, 3, o, init, noise, DType::F64);
  };
  PairHead absdiff = head_with(PairFeatures::AbsdiffDiff), product = head_with(PairFeatures::DiffProd);
  Tensor u = from_vector({1.0, -2.0}, {1, 2}, DType::F64), v = from_vector({3.0, 1.0}, {1, 2}, DType::F64);
  const std::vector<double> a = absdiff.forward(u, v).to_vector(), b = product.forward(u, v).to_vector();
  double differs = 0;
  for (size_t i = 0; i < a.size(); ++i) differs = std::max(differs, std::fabs(a[i] - b[i]));
  EXPECT_GT(differs, 1e-6);
  // Same features, same weights: the same function.
  EXPECT_EQ(absdiff.forward(u, v).to_vector(), head_with(PairFeatures::AbsdiffDiff).forward(u, v).to_vector());
  EXPECT_EQ(pair_features_from_name("absdiff_diff"), PairFeatures::AbsdiffDiff);
  EXPECT_EQ(pair_features_from_name("diff_prod"), PairFeatures::DiffProd);
  EXPECT_THROW(pair_features_from_name("concat"), Error);
}

TEST(Heads, AbsdiffPairFeaturesGradcheck) {
  Fixture f;
  HeadOptions o = f.options();
  o.pair_features = PairFeatures::AbsdiffDiff;
  PairHead head(f.encoder.sentence_dim(), 3, o, f.init, f.noise, DType::F64);
  EncoderWithHead both(f.encoder, head);
  Tensor x = random_input({2, 4, 3}, 26);
  Tensor mask = length_mask({4, 3}, 4);
  Tensor y = random_input({2, 4, 3}, 27).detach();
  expect_gradcheck(both, x, [&] {
    return head.forward(f.encoder.encode(x, mask).sentence, f.encoder.encode(y, mask).sentence);
  });
}

TEST(Heads, RelatednessKlLossGradcheck) {
  Fixture f;
  RelatednessHead head(f.encoder.sentence_dim(), 5, f.options(), f.init, f.noise, DType::F64);
  EncoderWithHead both(f.encoder, head);
  Tensor x = random_input({2, 4, 3}, 26);
  Tensor mask = length_mask({4, 1}, 4);
  Tensor y = random_input({2, 4, 3}, 27).detach();
  Tensor target = relatedness_target({2.4, 4.0}, 5, DType::F64);
  expect_gradcheck(both, x, [&] {
    Tensor logits = head.forward(f.encoder.encode(x, mask).sentence, f.encoder.encode(y, mask).sentence);
    return kl_div(log_softmax(logits, -1), target);
  });
}

TEST(Heads, TaggingIgnoresPaddedTokensInTheLoss) {
  Fixture f;
  TaggingHead head(f.encoder.token_dim(), 4, f.init, DType::F64);
  EncoderWithHead both(f.encoder, head);
  Tensor x = random_input({2, 4, 3}, 28);
  Tensor mask = length_mask({4, 2}, 4);
  Tensor tags = from_indices({0, 1, 2, 3, 1, 2, -100, -100}, {2, 4});
  expect_gradcheck(
      both, x, [&] { return cross_entropy(head.forward(f.encoder.encode(x, mask).tokens), tags); }, {"encoder.s2t."});
}

TEST(Relatedness, TargetDistributionFollowsTheFormula) {
  Tensor p = relatedness_target({1.0, 2.4, 4.75, 5.0}, 5, DType::F64);
  std::vector<double> expected = {1, 0, 0, 0, 0,  //
                                  0, 0.6, 0.4, 0, 0,  //
                                  0, 0, 0, 0.25, 0.75,  //
                                  0, 0, 0, 0, 1};
  std::vector<double> got = p.to_vector();
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(got[i], expected[i], 1e-12) << i;
  EXPECT_THROW(relatedness_target({0.5}, 5), Error);
  EXPECT_THROW(relatedness_target({5.5}, 5), Error);
}

TEST(Relatedness, PredictionIsTheExpectedScore) {
  // softmax(log p) = p, so the prediction of the target distribution is y itself.
  Tensor p = relatedness_target({2.4, 4.75}, 5, DType::F64);
  Tensor logits = log(add_scalar(p, 1e-300));
  Tensor pred = relatedness_prediction(logits);
  EXPECT_NEAR(pred.at({0}), 2.4, 1e-9);
  EXPECT_NEAR(pred.at({1}), 4.75, 1e-9);
}

TEST(Heads, PairHeadRejectsMismatchedSentences) {
  Fixture f;
  PairHead head(6, 3, f.options(), f.init, f.noise, DType::F64);
  EXPECT_THROW(head.forward(zeros({2, 6}, DType::F64), zeros({3, 6}, DType::F64)), Error);
}

}  // namespace
}  // namespace attn
