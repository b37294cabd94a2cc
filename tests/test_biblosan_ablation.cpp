// Bi-BloSAN's ablations (seed 002, Table 3; config key `ablation`): each
// removed part has no parameters, a dependence only that part carried is gone
// (a gradient that is exactly zero, and nonzero in the model that has the
// part), the rows without mBloSA compute the source2token / vanilla attention
// the table's caption names, and every ablated model passes the float64
// gradient check with a length-1 sentence, padding and an empty one.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "attn/engine/error.h"
#include "attn/models/biblosan.h"
#include "attn/models/masks.h"
#include "attn/ops/binary/binary.h"
#include "attn/ops/matmul/matmul.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/ops/softmax/softmax.h"
#include "attn/ops/unary/unary.h"
#include "attn/ops/view/view.h"
#include "attn/train/model_gradcheck.h"
#include "model_checks.h"
#include "seeded_encoder_context.h"
#include "test_util.h"

namespace attn {
namespace {

using namespace testing_support;
using ::testing::HasSubstr;

constexpr BiBlosanAblation kAblations[] = {BiBlosanAblation::Full, BiBlosanAblation::NoLocal,
                                           BiBlosanAblation::NoGlobal, BiBlosanAblation::NoMBlosa,
                                           BiBlosanAblation::NoMBlosaNoSource2Token};

BiBlosanOptions options_for(BiBlosanAblation a, int64_t block_len = 2) {
  BiBlosanOptions o;
  o.hidden = 4;
  o.activation = Activation::Elu;  // smooth: no gradient vanishes on a relu kink by chance
  o.block_len = BlockLenRule::fixed_length(block_len);
  o.ablation = a;
  return o;
}

MBlosaOptions mblosa_options(bool local, bool global) {
  MBlosaOptions o;
  o.activation = Activation::Elu;
  o.local_context = local;
  o.global_context = global;
  return o;
}

std::map<std::string, Shape> parameter_shapes(const Module& m) {
  std::map<std::string, Shape> out;
  for (const auto& [name, p] : m.named_parameters()) out[name] = p.shape();
  return out;
}

TEST(BiBlosanAblation, RemovedPartsHaveNoParameters) {
  auto shapes_of = [](BiBlosanAblation a) {
    Generator gen(1);
    return parameter_shapes(BiBlosan(3, options_for(a), gen, DType::F64));
  };
  const std::map<std::string, Shape> full = shapes_of(BiBlosanAblation::Full);
  const int64_t d = 4;
  for (const char* dir : {"fw", "bw"}) {
    const std::string p = dir;
    EXPECT_EQ(full.at(p + ".fusion.proj.weight"), Shape({2 * d, 3 * d}));
    EXPECT_EQ(full.count(p + ".inter_w1.weight"), 1u);
  }
  // w/o Local: the fusion gate loses h's third of W_f; nothing else changes.
  std::map<std::string, Shape> no_local = shapes_of(BiBlosanAblation::NoLocal), expected = full;
  for (const char* dir : {"fw", "bw"}) expected[std::string(dir) + ".fusion.proj.weight"] = Shape({2 * d, 2 * d});
  EXPECT_EQ(no_local, expected);
  // w/o Global: the block stages go, and E's third of W_f.
  for (const char* dir : {"fw", "bw"}) {
    const std::string p = dir;
    for (const char* gone : {".block_s2t.w.weight", ".block_s2t.w.bias", ".inter_w1.weight", ".inter_w2.weight",
                             ".inter_bias", ".block_gate.w1.weight", ".block_gate.w2.weight", ".block_gate.bias"})
      expected.erase(p + gone);
  }
  EXPECT_EQ(shapes_of(BiBlosanAblation::NoGlobal), expected);
  // w/o mBloSA: only the source2token over the 3-wide input remains; without
  // it too, the score layer gives one score per token (w [1, 3], b [1]).
  const std::map<std::string, Shape> s2t = {{"s2t.w1.weight", Shape({3, 3})},
                                             {"s2t.w1.bias", Shape({3})},
                                             {"s2t.w2.weight", Shape({3, 3})},
                                             {"s2t.w2.bias", Shape({3})}};
  EXPECT_EQ(shapes_of(BiBlosanAblation::NoMBlosa), s2t);
  std::map<std::string, Shape> vanilla = s2t;
  vanilla["s2t.w2.weight"] = Shape({1, 3});
  vanilla["s2t.w2.bias"] = Shape({1});
  EXPECT_EQ(shapes_of(BiBlosanAblation::NoMBlosaNoSource2Token), vanilla);
}

// w/o Global: a token's output no longer depends on any other block. Blocks
// of 2 over 6 tokens; token 2 (block 1) through E depends on block 0
// (forward) and block 2 (backward) in the full model.
TEST(BiBlosanAblation, WithoutGlobalOtherBlocksDoNotReachAToken) {
  const Tensor x = random_input({2, 6, 3}, 11);
  const Tensor mask = length_mask({6, 5}, 6);
  for (BiBlosanAblation a : {BiBlosanAblation::Full, BiBlosanAblation::NoGlobal}) {
    Generator gen(12);
    BiBlosan model(3, options_for(a), gen, DType::F64);
    Tensor g = input_gradient(
        x, [&](const Tensor& in) { return model.encode(in, mask).tokens; },
        [](const Tensor& t) { return narrow(narrow(t, 0, 0, 1), 1, 2, 1); });
    double other_blocks = 0;
    for (int64_t i : {0, 1, 4, 5}) other_blocks = std::max(other_blocks, max_abs(token(g, 0, i)));
    if (a == BiBlosanAblation::Full) {
      EXPECT_GT(other_blocks, 1e-6);
    } else {
      EXPECT_EQ(other_blocks, 0.0);
    }
    EXPECT_GT(max_abs(token(g, 0, 3)), 1e-6) << biblosan_ablation_name(a) << ": its own block still counts";
  }
}

// w/o Local: with E's columns of W_f set to zero (the global path silenced
// at the gate), a token of the full mBloSA still depends on the earlier
// tokens of its block through h; without h it depends on its own input only.
TEST(BiBlosanAblation, WithoutLocalNoTokenSpecificContextRemains) {
  const int64_t d = 3;
  const Tensor x = random_input({1, 3, d}, 21);
  const Tensor valid = length_mask({3}, 3);
  for (bool local : {true, false}) {
    Generator gen(22);
    MBlosa block(d, mblosa_options(local, true), gen, DType::F64);
    const Tensor w = params_of(block).at("fusion.proj.weight");  // [2d, (local ? 3 : 2) d], E's block last
    const int64_t e_first = w.size(1) - d;
    for (int64_t row = 0; row < w.size(0); ++row)
      for (int64_t col = e_first; col < w.size(1); ++col) write_element(w, row * w.size(1) + col, 0.0);
    // Token 2 of the one block of 3, forward mask: h_2 attends to tokens 0 and 1.
    Tensor g = input_gradient(
        x, [&](const Tensor& in) { return block.forward(in, valid, 3); },
        [](const Tensor& u) { return narrow(u, 1, 2, 1); });
    const double others = std::max(max_abs(token(g, 0, 0)), max_abs(token(g, 0, 1)));
    if (local) {
      EXPECT_GT(others, 1e-6);
    } else {
      EXPECT_EQ(others, 0.0);
    }
    EXPECT_GT(max_abs(token(g, 0, 2)), 1e-6);
  }
}

// w/o mBloSA: "word embeddings directly followed by a source2token
// attention": the tokens are the input (exactly, zero at padding), the
// sentence the two-layer multi-dim source2token over them; w/o mBloSA &
// source2token: the same with one score w^T elu(W1 x_i + b1) + b per token.
TEST(BiBlosanAblation, WithoutMBlosaTheSentenceIsAttentionOverTheEmbeddings) {
  const Tensor x = random_input({2, 4, 3}, 31).detach();
  const Tensor mask = length_mask({4, 1}, 4);
  for (BiBlosanAblation a : {BiBlosanAblation::NoMBlosa, BiBlosanAblation::NoMBlosaNoSource2Token}) {
    Generator gen(32);
    BiBlosan model(3, options_for(a), gen, DType::F64);
    EXPECT_FALSE(model.has_mblosa());
    EXPECT_EQ(model.token_dim(), 3);
    const EncoderOutput out = model.encode(x, mask);
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t j = 0; j < 4; ++j)
        for (int64_t l = 0; l < 3; ++l)
          EXPECT_EQ(out.tokens.at({b, j, l}), mask.at({b, j}) != 0 ? x.at({b, j, l}) : 0.0);
    const std::map<std::string, Tensor> p = params_of(model);
    Tensor scores = linear(elu(linear(x, p.at("s2t.w1.weight"), p.at("s2t.w1.bias"))), p.at("s2t.w2.weight"),
                           p.at("s2t.w2.bias"));  // [B, n, 3] or [B, n, 1]
    Tensor probs = softmax(expand(scores, x.shape()), 1, unsqueeze(mask, -1));
    Tensor sentence = sum(probs * zero_padded(x, mask), {1});
    // Convex combinations of inputs in [-1, 1]: the two float64 evaluations
    // agree to a few rounding errors of 1e-16.
    EXPECT_LT(max_abs_diff(out.sentence, sentence), 1e-14) << biblosan_ablation_name(a);
    // The length-1 sentence is its one token.
    for (int64_t l = 0; l < 3; ++l) EXPECT_NEAR(out.sentence.at({1, l}), x.at({1, 0, l}), 1e-15);
  }
}

// w/o source2token (vanilla attention): one score weights every feature.
// With only score row 0 nonzero, the multi-dim source2token gives features
// 1 and 2 constant scores, so their outputs depend on no token's score:
// their gradient with respect to W1 is exactly zero. The vanilla score has
// no per-feature row; every feature's output depends on W1.
TEST(BiBlosanAblation, VanillaAttentionSharesOneScoreAcrossFeatures) {
  const Tensor x = random_input({2, 4, 3}, 41).detach();
  const Tensor mask = length_mask({4, 3}, 4);
  for (BiBlosanAblation a : {BiBlosanAblation::NoMBlosa, BiBlosanAblation::NoMBlosaNoSource2Token}) {
    Generator gen(42);
    BiBlosan model(3, options_for(a), gen, DType::F64);
    const std::map<std::string, Tensor> p = params_of(model);
    const Tensor w2 = p.at("s2t.w2.weight");  // [3, 3] (multi-dim) or [1, 3] (vanilla)
    for (int64_t k = w2.size(1); k < w2.numel(); ++k) write_element(w2, k, 0.0);  // rows 1, 2
    sum(narrow(model.encode(x, mask).sentence, 1, 1, 2)).backward();
    const double w1_gradient = max_abs(p.at("s2t.w1.weight").grad());
    if (a == BiBlosanAblation::NoMBlosa) {
      EXPECT_EQ(w1_gradient, 0.0);
    } else {
      EXPECT_GT(w1_gradient, 1e-6);
    }
  }
}

// Every ablation, float64 central differences: the encoder alone over its
// whole Jacobian (input and every parameter, each parameter with a nonzero
// gradient) on sentence lengths {8, 1, 0} in blocks of 3 (a length-1
// sentence beside padding and an empty one; blocks of 3, 3 and 2 give every
// attention several keys, and no block is a single token, whose forward h and
// so v are 0), and the whole task model (embedding,
// Bi-BloSAN, head) through its loss on lengths {9, 5, 0}, a sample of 4
// elements per parameter tensor.
class BiBlosanAblationGradcheck : public ::testing::TestWithParam<BiBlosanAblation> {};

TEST_P(BiBlosanAblationGradcheck, EncoderAndTaskModelMatchCentralDifferences) {
  Generator gen(71);
  BiBlosanOptions o = options_for(GetParam(), 3);
  o.hidden = 3;
  BiBlosan model(2, o, gen, DType::F64);
  const Tensor x = random_input({3, 8, 2}, 72);
  const Tensor mask = length_mask({8, 1, 0}, 8);
  expect_gradcheck(model, x, [&] { return flat_outputs(model.encode(x, mask)); });

  ModelGradcheckSpec spec;
  spec.config = small_model_config("biblosan");
  spec.config.set("ablation", biblosan_ablation_name(GetParam()));
  spec.config.set("block_len", "3");
  spec.tokens = 9;
  spec.samples = 4;
  const ModuleGradcheckResult m = gradcheck_task_model(spec);
  EXPECT_TRUE(m.result.passed) << m.result.failure;
  for (const GradcheckInputReport& in : m.result.inputs) {
    EXPECT_TRUE(in.reached) << in.label;
    EXPECT_GT(in.max_abs_gradient, 0.0) << in.label;
  }
}

INSTANTIATE_TEST_SUITE_P(Ablations, BiBlosanAblationGradcheck, ::testing::ValuesIn(kAblations),
                         [](const ::testing::TestParamInfo<BiBlosanAblation>& info) {
                           return std::string(biblosan_ablation_name(info.param));
                         });

// float32 with large inputs: every ablation stays finite, forward and backward.
TEST(BiBlosanAblation, Float32LargeInputsStayFinite) {
  Generator data(51);
  const Tensor x = rand_uniform({2, 7, 3}, -300, 300, data, DType::F32);
  const Tensor mask = length_mask({7, 1}, 7);
  for (BiBlosanAblation a : kAblations) {
    Generator gen(52);
    BiBlosan model(3, options_for(a), gen, DType::F32);
    const Tensor y = flat_outputs(model.encode(x, mask));
    for (double v : y.to_vector()) ASSERT_TRUE(std::isfinite(v)) << biblosan_ablation_name(a);
    sum(y).backward();
    for (const auto& [name, p] : model.named_parameters())
      for (double g : p.grad().to_vector()) ASSERT_TRUE(std::isfinite(g)) << biblosan_ablation_name(a) << " " << name;
  }
}

TEST(BiBlosanAblation, ConfigKeyDefaultsToTheFullModelAndRejectsBadSetups) {
  EXPECT_EQ(BiBlosanOptions().ablation, BiBlosanAblation::Full);
  SeededEncoderContext ctx(3, 61, 62);
  Config c = Config::parse("hidden = 4\nablation = no_global\n");
  std::unique_ptr<Encoder> enc = build_biblosan_encoder(c, ctx);
  EXPECT_NO_THROW(c.check_all_used("biblosan"));
  const MBlosaStages st =
      dynamic_cast<BiBlosan&>(*enc).forward_mblosa().stages(random_input({1, 4, 4}, 65).detach(), length_mask({4}, 4), 2);
  EXPECT_TRUE(st.h.defined() && st.u.defined());
  EXPECT_FALSE(st.v.defined() || st.o.defined() || st.e.defined());  // no block stages
  EXPECT_THAT(error_of([&] { build_biblosan_encoder(Config::parse("ablation = no_blocks\n"), ctx); }),
              HasSubstr("key 'ablation' of biblosan must be one of full, no_local, no_global, no_mblosa, "
                        "no_mblosa_no_s2t, got 'no_blocks'"));
  Generator gen(63);
  EXPECT_THAT(error_of([&] { MBlosa(3, mblosa_options(false, false), gen, DType::F64); }),
              HasSubstr("needs the local (h) or the global (E) context"));
  Generator gen2(64);
  BiBlosan plain(3, options_for(BiBlosanAblation::NoMBlosa), gen2, DType::F64);
  EXPECT_THAT(error_of([&] { plain.forward_mblosa(); }), HasSubstr("has no mBloSA"));
}

}  // namespace
}  // namespace attn
