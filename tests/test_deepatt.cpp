// DeepAtt (models/deepatt.h), the SRL encoder of Tan et al. (2017) with
// multi-head or MTSA attention: padding never reaches a valid token, the
// whole srl model's gradients match central differences in float64, the
// predicate indicator reaches the tags, and bad configs are named.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "attn/engine/autograd.h"
#include "attn/engine/copy.h"
#include "attn/models/deepatt.h"
#include "attn/models/model_config_check.h"
#include "attn/models/task_model.h"
#include "attn/train/model_gradcheck.h"
#include "model_checks.h"
#include "test_util.h"

namespace attn {
namespace {

using testing_support::expect_padding_invariant;
using testing_support::random_input;

DeepAttOptions small_options(DeepAttAttention attention) {
  DeepAttOptions o;
  o.hidden = 8;
  o.heads = 2;
  o.layers = 2;
  o.ffn_dim = 12;
  o.attention = attention;
  o.positions = attention == DeepAttAttention::MultiHead;
  return o;
}

Tensor two_sentence_mask() { return cast(from_indices({1, 1, 1, 1, 1, 1, 1, 0, 0, 0}, {2, 5}), DType::U8); }

TEST(DeepAtt, PaddingNeverReachesAValidTokenWithEitherAttention) {
  for (DeepAttAttention a : {DeepAttAttention::MultiHead, DeepAttAttention::Mtsa}) {
    Generator init(3), noise(4);
    DeepAtt enc(8, small_options(a), init, noise, DType::F64);
    enc.set_training(false);
    const Tensor x = random_input({2, 5, 8}, 7);
    EncoderOutput out = enc.encode(x.detach(), two_sentence_mask());
    EXPECT_EQ(out.tokens.shape(), Shape({2, 5, 8}));
    EXPECT_EQ(out.sentence.shape(), Shape({2, 8}));
    expect_padding_invariant(enc, x, two_sentence_mask());
  }
}

// The attention dropout of the multi-head sub-layer acts in training only:
// with keep 1 training and evaluation give the same tokens, with keep 0.5 a
// training pass differs from evaluation and stays finite and zero at padding.
TEST(DeepAtt, MultiHeadAttentionDropoutActsInTrainingOnly) {
  for (double keep : {1.0, 0.5}) {
    DeepAttOptions o = small_options(DeepAttAttention::MultiHead);
    o.residual_keep_prob = o.relu_keep_prob = 1;
    o.attn_keep_prob = keep;
    Generator init(3), noise(4);
    DeepAtt enc(8, o, init, noise, DType::F64);
    const Tensor x = random_input({2, 5, 8}, 7).detach();
    enc.set_training(false);
    const std::vector<double> eval = enc.encode(x, two_sentence_mask()).tokens.to_vector();
    enc.set_training(true);
    const std::vector<double> train = enc.encode(x, two_sentence_mask()).tokens.to_vector();
    double moved = 0;
    for (size_t k = 0; k < eval.size(); ++k) {
      ASSERT_TRUE(std::isfinite(train[k]));
      moved = std::max(moved, std::abs(train[k] - eval[k]));
    }
    for (size_t k = 7 * 8; k < train.size(); ++k) EXPECT_EQ(train[k], 0.0) << "padded output " << k;
    if (keep == 1.0) {
      EXPECT_LT(moved, 1e-12);
    } else {
      EXPECT_GT(moved, 1e-6);
    }
  }
}

TEST(DeepAtt, ProjectsAnInputOfAnotherWidth) {
  Generator init(3), noise(4);
  DeepAtt enc(5, small_options(DeepAttAttention::MultiHead), init, noise, DType::F64);
  enc.set_training(false);
  EXPECT_EQ(enc.encode(random_input({2, 5, 5}, 1).detach(), two_sentence_mask()).tokens.shape(), Shape({2, 5, 8}));
  const auto params = enc.named_parameters();
  EXPECT_TRUE(std::any_of(params.begin(), params.end(), [](const auto& p) { return p.first == "proj.weight"; }));
}

Config small_srl_config(const std::string& attention) {
  Config c = small_model_config("deepatt", 4, 4, 2);
  c.set("layers", "2");
  c.set("ffn_dim", "8");
  c.set("predicate_dim", "4");
  c.set("attention", attention);
  return c;
}

TEST(DeepAtt, SrlModelGradientsMatchCentralDifferences) {
  for (const char* attention : {"multi_head", "mtsa"}) {
    ModelGradcheckSpec spec;
    spec.config = small_srl_config(attention);
    spec.task = TaskKind::Srl;
    const ModuleGradcheckResult m = gradcheck_task_model(spec);
    EXPECT_TRUE(m.result.passed) << attention << ": " << m.result.failure;
    bool predicate_checked = false;
    for (const GradcheckInputReport& in : m.result.inputs) {
      // Everything but the sentence readout (unused by the tagging head).
      if (in.label.find("s2t") == std::string::npos) {
        EXPECT_TRUE(in.reached) << attention << ": " << in.label;
      }
      predicate_checked = predicate_checked || in.label.find("predicate_embedding") != std::string::npos;
    }
    EXPECT_TRUE(predicate_checked) << attention;
  }
}

TEST(DeepAtt, ThePredicateIndicatorChangesTheTags) {
  Config c = small_srl_config("mtsa");
  Generator init(1), noise(2);
  TaskModel model(c, TaskKind::Srl, 10, 5, DType::F64, init, noise);
  model.set_training(false);
  NoGrad no_grad;
  TaskInputs in;
  in.ids = from_indices({3, 4, 5, 6}, {1, 4});
  in.mask = cast(from_indices({1, 1, 1, 1}, {1, 4}), DType::U8);
  in.predicate = from_indices({0, 1, 0, 0}, {1, 4});
  const std::vector<double> a = model.logits(in).to_vector();
  in.predicate = from_indices({0, 0, 0, 1}, {1, 4});
  const std::vector<double> b = model.logits(in).to_vector();
  ASSERT_EQ(a.size(), 4u * 5u);
  double moved = 0;
  for (size_t k = 0; k < a.size(); ++k) moved = std::max(moved, std::abs(a[k] - b[k]));
  EXPECT_GT(moved, 1e-6);
  in.predicate = Tensor();
  EXPECT_THAT(testing_support::error_of([&] { model.logits(in); }), ::testing::HasSubstr("predicate indicator"));
}

TEST(DeepAtt, BadConfigsAreNamed) {
  Generator init(1), noise(2);
  DeepAttOptions o = small_options(DeepAttAttention::MultiHead);
  o.heads = 3;
  EXPECT_THAT(testing_support::error_of([&] { DeepAtt(8, o, init, noise); }),
              ::testing::HasSubstr("hidden 8 must be a positive multiple of heads 3"));
  Config c = small_srl_config("lstm");
  EXPECT_THAT(testing_support::error_of([&] { check_model_config(c, "the model config"); }),
              ::testing::HasSubstr("lstm"));
}

TEST(DeepAtt, DefaultsFollowTanEtAlAndSeed001) {
  const DeepAttOptions o;
  EXPECT_EQ(o.hidden, 200);
  EXPECT_EQ(o.heads, 8);
  EXPECT_EQ(o.layers, 10);
  EXPECT_EQ(o.ffn_dim, 800);
  EXPECT_DOUBLE_EQ(o.residual_keep_prob, 0.8);
  EXPECT_DOUBLE_EQ(o.relu_keep_prob, 0.9);
  EXPECT_DOUBLE_EQ(o.attn_keep_prob, 0.9);
  EXPECT_EQ(deepatt_config_keys().default_string("sigma_t"), "identity");
  EXPECT_EQ(task_model_config_keys().default_int("predicate_dim"), 100);
}

}  // namespace
}  // namespace attn
