// MTSA's ablations (seed 001, Table 3; config key `ablation`, and head_masks
// = none for "w/o fw&bw masks"): each removed part has no parameters, a
// dependence only that part carried is gone (a gradient that is exactly zero,
// and nonzero in the full model), the attention with an omitted term equals
// Eq. 10-12 with that term left out, and every ablated model passes the
// float64 gradient check with a length-1 sentence, padding and an empty one.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>

#include "attn/engine/error.h"
#include "attn/models/masks.h"
#include "attn/models/mtsa.h"
#include "attn/ops/binary/binary.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/ops/view/view.h"
#include "attn/train/model_gradcheck.h"
#include "model_checks.h"
#include "seeded_encoder_context.h"
#include "test_util.h"

namespace attn {
namespace {

using namespace testing_support;
using ::testing::HasSubstr;

constexpr MtsaAblation kAblations[] = {MtsaAblation::Full, MtsaAblation::NoToken2Token, MtsaAblation::NoSource2Token,
                                       MtsaAblation::NoProposedModules};

MtsaOptions options_for(MtsaAblation ablation, MtsaVariant variant = MtsaVariant::Original,
                        std::vector<HeadMask> masks = {HeadMask::Forward, HeadMask::Backward}) {
  MtsaOptions o;
  o.activation = Activation::Elu;  // smooth: no gradient vanishes on a relu kink by chance
  o.heads = 2;
  o.variant = variant;
  o.ablation = ablation;
  o.head_masks = std::move(masks);
  return o;
}

std::set<std::string> parameter_names(const Module& m) {
  std::set<std::string> names;
  for (const auto& [name, p] : m.named_parameters()) names.insert(name);
  return names;
}

void zero_parameter(const Module& m, const std::string& name) {
  const Tensor p = params_of(m).at(name);
  for (int64_t k = 0; k < p.numel(); ++k) write_element(p, k, 0.0);
}

TEST(MtsaAblation, RemovedPartsHaveNoParameters) {
  using Names = std::set<std::string>;
  const Names v = {"v.weight", "v.bias"}, qk = {"q.weight", "k.weight"},
              s = {"s1.weight", "s1.bias", "s2.weight", "s2.bias"}, gate = {"gate.weight", "gate.bias"};
  auto join = [](std::initializer_list<Names> parts) {
    Names all;
    for (const Names& p : parts) all.insert(p.begin(), p.end());
    return all;
  };
  auto names_of = [](MtsaAblation a, MtsaVariant variant) {
    Generator gen(1);
    return parameter_names(MtsaLayer(3, 4, options_for(a, variant), gen, nullptr, DType::F64));
  };
  const MtsaVariant orig = MtsaVariant::Original, paper = MtsaVariant::Paper;
  EXPECT_EQ(names_of(MtsaAblation::Full, orig), join({v, qk, s, gate}));
  EXPECT_EQ(names_of(MtsaAblation::NoToken2Token, orig), join({v, s, gate}));
  EXPECT_EQ(names_of(MtsaAblation::NoSource2Token, orig), join({v, qk, gate}));
  EXPECT_EQ(names_of(MtsaAblation::NoProposedModules, orig), v);
  // The paper's variant: no biases on q, k, v; S = f_s(k) keeps k without token2token.
  const Names pv = {"v.weight", "out.weight"};
  EXPECT_EQ(names_of(MtsaAblation::Full, paper), join({pv, qk, s}));
  EXPECT_EQ(names_of(MtsaAblation::NoToken2Token, paper), join({pv, {"k.weight"}, s}));
  EXPECT_EQ(names_of(MtsaAblation::NoSource2Token, paper), join({pv, qk}));
  EXPECT_EQ(names_of(MtsaAblation::NoProposedModules, paper), pv);
}

// Eq. 10-12 per head written out, with the omitted term left out of the
// score: f[j][i][l] = t2t(j, i) + S[i][l] over the allowed keys i.
std::vector<double> reference(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& s,
                              const Tensor& positional, const Tensor& valid) {
  const int64_t B = v.size(0), H = v.size(1), n = v.size(2), d = v.size(3);
  std::vector<double> out(static_cast<size_t>(v.numel()), 0.0);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t c = 0; c < H; ++c)
      for (int64_t j = 0; j < n; ++j)
        for (int64_t l = 0; l < d; ++l) {
          std::vector<double> f(static_cast<size_t>(n), -std::numeric_limits<double>::infinity());
          double mx = -std::numeric_limits<double>::infinity();
          for (int64_t i = 0; i < n; ++i) {
            if (positional.at({c, j, i}) == 0 || valid.at({b, i}) == 0 || valid.at({b, j}) == 0) continue;
            double t2t = 0;
            if (q.defined()) {
              double dot = 0;
              for (int64_t m = 0; m < d; ++m) dot += q.at({b, c, j, m}) * k.at({b, c, i, m});
              t2t = -std::log1p(std::exp(-dot / std::sqrt(static_cast<double>(d))));  // log sigmoid
            }
            f[i] = t2t + (s.defined() ? s.at({b, c, i, l}) : 0.0);
            mx = std::max(mx, f[i]);
          }
          if (mx == -std::numeric_limits<double>::infinity()) continue;  // no allowed key: 0
          double z = 0, acc = 0;
          for (int64_t i = 0; i < n; ++i) {
            if (f[i] == -std::numeric_limits<double>::infinity()) continue;
            z += std::exp(f[i] - mx);
            acc += std::exp(f[i] - mx) * v.at({b, c, i, l});
          }
          out[static_cast<size_t>(((b * H + c) * n + j) * d + l)] = acc / z;
        }
  return out;
}

TEST(MtsaAblation, AttentionWithAnOmittedTermIsEq10WithoutIt) {
  const int64_t n = 5, d = 3;
  const Tensor positional = head_mask_tensor({HeadMask::Forward, HeadMask::None}, n, 0);
  const Tensor valid = length_mask({5, 3}, n);
  const Tensor q = random_input({2, 2, n, d}, 11).detach(), k = random_input({2, 2, n, d}, 12).detach();
  const Tensor v = random_input({2, 2, n, d}, 13).detach(), s = random_input({2, 2, n, d}, 14).detach();
  TensorizedAttentionOptions o;  // log-sigmoid sigma_t, identity sigma_s
  for (bool fused : {true, false}) {
    o.fused = fused;
    // Every output is a convex combination of values in [-1, 1]: float64
    // rounding of a few dozen operations stays far below 1e-12.
    const std::vector<double> got_no_t2t = tensorized_self_attention(Tensor(), Tensor(), v, s, positional, valid, o).to_vector();
    const std::vector<double> want_no_t2t = reference(Tensor(), Tensor(), v, s, positional, valid);
    const std::vector<double> got_no_s2t = tensorized_self_attention(q, k, v, Tensor(), positional, valid, o).to_vector();
    const std::vector<double> want_no_s2t = reference(q, k, v, Tensor(), positional, valid);
    for (size_t i = 0; i < want_no_t2t.size(); ++i) {
      EXPECT_NEAR(got_no_t2t[i], want_no_t2t[i], 1e-12) << "no token2token, fused " << fused << ", element " << i;
      EXPECT_NEAR(got_no_s2t[i], want_no_s2t[i], 1e-12) << "no source2token, fused " << fused << ", element " << i;
    }
  }
  EXPECT_THAT(error_of([&] { tensorized_self_attention(q, Tensor(), v, s, positional, valid, o); }),
              HasSubstr("q and k must both be given"));
}

// w/o token2token: the weights p_ji no longer depend on the query j, so H_j
// (the attention before the gate) has no gradient with respect to token j's
// own input (the masks keep key j from query j). Through R it has one.
TEST(MtsaAblation, WithoutToken2TokenAttentionIgnoresItsQuery) {
  const Tensor x = random_input({2, 4, 3}, 21);
  const Tensor valid = length_mask({4, 3}, 4);
  for (MtsaVariant variant : {MtsaVariant::Original, MtsaVariant::Paper})
    for (MtsaAblation a : {MtsaAblation::Full, MtsaAblation::NoToken2Token}) {
      Generator gen(22);
      MtsaLayer layer(3, 4, options_for(a, variant), gen, nullptr, DType::F64);
      // Query 2 of example 0: keys 0, 1 (forward head) and 3 (backward head).
      Tensor g = input_gradient(
          x, [&](const Tensor& in) { return layer.attend(in, valid).h; },
          [](const Tensor& h) { return narrow(narrow(h, 0, 0, 1), 2, 2, 1); });
      const double own = max_abs(token(g, 0, 2));
      const std::string what = std::string(mtsa_variant_name(variant)) + "/" + mtsa_ablation_name(a);
      if (a == MtsaAblation::Full) {
        EXPECT_GT(own, 1e-6) << what;
      } else {
        EXPECT_EQ(own, 0.0) << what;
      }
      EXPECT_GT(max_abs(token(g, 0, 0)), 1e-6) << what << ": the keys still count";
    }
}

// w/o source2token: with the token2token scores held constant (q = 0), the
// weights of feature l can only vary through S, whose MLP mixes all of key
// i's features. Without S, H[.., l] depends on feature l of v alone: the
// original variant's v rows of the other features, and the paper variant's k
// (S's only input once R is constant), get exactly zero gradient.
TEST(MtsaAblation, WithoutSource2TokenFeaturesDoNotMix) {
  const Tensor x = random_input({2, 4, 3}, 31).detach();
  const Tensor valid = length_mask({4, 3}, 4);
  for (MtsaVariant variant : {MtsaVariant::Original, MtsaVariant::Paper})
    for (MtsaAblation a : {MtsaAblation::Full, MtsaAblation::NoSource2Token}) {
      Generator gen(32);
      MtsaLayer layer(3, 4, options_for(a, variant), gen, nullptr, DType::F64);
      zero_parameter(layer, "q.weight");
      // Feature 0 of head 0 (the forward head) at every query of example 0.
      sum(narrow(narrow(narrow(layer.attend(x, valid).h, 0, 0, 1), 1, 0, 1), 3, 0, 1)).backward();
      const std::map<std::string, Tensor> p = params_of(layer);
      // v.weight is [hidden, in]: row c * d_h + l makes feature l of head c.
      const double other_features = variant == MtsaVariant::Original
                                        ? max_abs(narrow(p.at("v.weight").grad(), 0, 1, 3))
                                        : max_abs(p.at("k.weight").grad());
      const std::string what = std::string(mtsa_variant_name(variant)) + "/" + mtsa_ablation_name(a);
      if (a == MtsaAblation::Full) {
        EXPECT_GT(other_features, 1e-6) << what;
      } else {
        EXPECT_EQ(other_features, 0.0) << what;
      }
      EXPECT_GT(max_abs(narrow(p.at("v.weight").grad(), 0, 0, 1)), 1e-6) << what << ": feature 0 of v still counts";
    }
}

// w/o proposed modules: no attention, so token j's output depends on no
// other token.
TEST(MtsaAblation, WithoutProposedModulesTokensDoNotInteract) {
  const Tensor x = random_input({2, 4, 3}, 41);
  const Tensor valid = length_mask({4, 3}, 4);
  for (MtsaVariant variant : {MtsaVariant::Original, MtsaVariant::Paper})
    for (MtsaAblation a : {MtsaAblation::Full, MtsaAblation::NoProposedModules}) {
      Generator gen(42);
      MtsaLayer layer(3, 4, options_for(a, variant), gen, nullptr, DType::F64);
      Tensor g = input_gradient(
          x, [&](const Tensor& in) { return layer.forward(in, valid); },
          [](const Tensor& y) { return narrow(narrow(y, 0, 0, 1), 1, 2, 1); });
      double others = 0;
      for (int64_t i : {0, 1, 3}) others = std::max(others, max_abs(token(g, 0, i)));
      const std::string what = std::string(mtsa_variant_name(variant)) + "/" + mtsa_ablation_name(a);
      if (a == MtsaAblation::Full) {
        EXPECT_GT(others, 1e-6) << what;
      } else {
        EXPECT_EQ(others, 0.0) << what;
      }
      EXPECT_GT(max_abs(token(g, 0, 2)), 1e-6) << what;
    }
}

// w/o fw&bw masks (head_masks = none, the released code's mask without
// direction: every key but the query itself): the forward head's H_j now
// depends on later tokens, which the forward mask keeps out exactly.
// The masks have no parameters: the parameter sets are the same.
TEST(MtsaAblation, WithoutDirectionMasksForwardHeadSeesLaterTokens) {
  const Tensor x = random_input({2, 4, 3}, 51);
  const Tensor valid = length_mask({4, 3}, 4);
  std::set<std::string> names[2];
  int which = 0;
  for (HeadMask first : {HeadMask::Forward, HeadMask::None}) {
    Generator gen(52);
    MtsaLayer layer(3, 4, options_for(MtsaAblation::Full, MtsaVariant::Original, {first, first == HeadMask::Forward ? HeadMask::Backward : HeadMask::None}),
                    gen, nullptr, DType::F64);
    names[which++] = parameter_names(layer);
    // Head 0 at query 1 of example 0.
    Tensor g = input_gradient(
        x, [&](const Tensor& in) { return layer.attend(in, valid).h; },
        [](const Tensor& h) { return narrow(narrow(narrow(h, 0, 0, 1), 1, 0, 1), 2, 1, 1); });
    const double later = std::max(max_abs(token(g, 0, 2)), max_abs(token(g, 0, 3)));
    if (first == HeadMask::Forward) {
      EXPECT_EQ(later, 0.0);
    } else {
      EXPECT_GT(later, 1e-6);
    }
  }
  EXPECT_EQ(names[0], names[1]);
}

// Every ablation in both variants, float64 central differences: the encoder
// alone over its whole Jacobian (input and every parameter, each parameter
// with a nonzero gradient) on sentence lengths {4, 1, 0} (a length-1
// sentence beside padding and an empty one), and the whole task model
// (embedding, MTSA, source2token, head) through its loss on lengths
// {5, 3, 0}, a sample of 4 elements per parameter tensor.
class MtsaAblationGradcheck : public ::testing::TestWithParam<MtsaAblation> {};

TEST_P(MtsaAblationGradcheck, EncoderAndTaskModelMatchCentralDifferences) {
  for (MtsaVariant variant : {MtsaVariant::Original, MtsaVariant::Paper}) {
    SCOPED_TRACE(mtsa_variant_name(variant));
    Generator gen(81);
    Mtsa model(2, 4, options_for(GetParam(), variant), gen, nullptr, DType::F64);
    const Tensor x = random_input({3, 4, 2}, 82);
    const Tensor mask = length_mask({4, 1, 0}, 4);
    expect_gradcheck(model, x, [&] { return flat_outputs(model.encode(x, mask)); });

    ModelGradcheckSpec spec;
    spec.config = small_model_config("mtsa");
    spec.config.set("mtsa_variant", mtsa_variant_name(variant));
    spec.config.set("ablation", mtsa_ablation_name(GetParam()));
    spec.tokens = 5;
    spec.samples = 4;
    const ModuleGradcheckResult m = gradcheck_task_model(spec);
    EXPECT_TRUE(m.result.passed) << m.result.failure;
    for (const GradcheckInputReport& in : m.result.inputs) {
      EXPECT_TRUE(in.reached) << in.label;
      EXPECT_GT(in.max_abs_gradient, 0.0) << in.label;
    }
  }
}

// The "w/o fw&bw masks" row's encoder, both variants, as above.
TEST(MtsaAblation, WithoutDirectionMasksEncoderMatchesCentralDifferences) {
  for (MtsaVariant variant : {MtsaVariant::Original, MtsaVariant::Paper}) {
    SCOPED_TRACE(mtsa_variant_name(variant));
    Generator gen(91);
    Mtsa model(2, 4, options_for(MtsaAblation::Full, variant, {HeadMask::None, HeadMask::None}), gen, nullptr,
               DType::F64);
    const Tensor x = random_input({3, 4, 2}, 92);
    const Tensor mask = length_mask({4, 1, 0}, 4);
    expect_gradcheck(model, x, [&] { return flat_outputs(model.encode(x, mask)); });
  }
}

INSTANTIATE_TEST_SUITE_P(Ablations, MtsaAblationGradcheck, ::testing::ValuesIn(kAblations),
                         [](const ::testing::TestParamInfo<MtsaAblation>& info) {
                           return std::string(mtsa_ablation_name(info.param));
                         });

// float32 with large inputs: every ablation stays finite, forward and backward.
TEST(MtsaAblation, Float32LargeInputsStayFinite) {
  Generator data(61);
  const Tensor x = rand_uniform({2, 6, 3}, -300, 300, data, DType::F32);
  const Tensor valid = length_mask({6, 1}, 6);
  for (MtsaAblation a : kAblations) {
    Generator gen(62);
    MtsaLayer layer(3, 4, options_for(a), gen, nullptr, DType::F32);
    const Tensor y = layer.forward(x, valid);
    for (double v : y.to_vector()) ASSERT_TRUE(std::isfinite(v)) << mtsa_ablation_name(a);
    sum(y).backward();
    for (const auto& [name, p] : layer.named_parameters())
      for (double g : p.grad().to_vector()) ASSERT_TRUE(std::isfinite(g)) << mtsa_ablation_name(a) << " " << name;
  }
}

TEST(MtsaAblation, ConfigKeyDefaultsToTheFullModelAndRejectsUnknownNames) {
  EXPECT_EQ(MtsaOptions().ablation, MtsaAblation::Full);
  SeededEncoderContext ctx(3, 71, 72);
  Config c = Config::parse("hidden = 4\nablation = no_source2token\n");
  std::unique_ptr<Encoder> enc = build_mtsa_encoder(c, ctx);
  EXPECT_EQ(dynamic_cast<Mtsa&>(*enc).layer().options().ablation, MtsaAblation::NoSource2Token);
  EXPECT_THAT(error_of([&] { build_mtsa_encoder(Config::parse("hidden = 4\nablation = no_masks\n"), ctx); }),
              HasSubstr("key 'ablation' of mtsa must be one of full, no_token2token, no_source2token, "
                        "no_proposed_modules, got 'no_masks'"));
}

}  // namespace
}  // namespace attn
