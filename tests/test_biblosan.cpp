// Bi-BloSAN / mBloSA: block length rules, gradcheck end to end, padding
// invariance, empty sequences, the one-block reduction, block isolation of
// the intra-block attention, block-level causality, config and shape errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "attn/engine/copy.h"
#include "attn/engine/error.h"
#include "attn/models/biblosan.h"
#include "attn/models/disa.h"
#include "attn/nn/fusion_gate.h"
#include "attn/ops/binary/binary.h"
#include "attn/ops/matmul/matmul.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/ops/softmax/softmax.h"
#include "attn/ops/unary/unary.h"
#include "attn/ops/view/view.h"
#include "model_checks.h"
#include "test_util.h"

namespace attn {
namespace {

using namespace testing_support;

using ::testing::HasSubstr;

BiBlosanOptions options(int64_t hidden, BlockLenRule rule) {
  BiBlosanOptions o;
  o.hidden = hidden;
  o.block_len = rule;
  o.activation = Activation::Elu;  // the references below use elu (and it is smooth for gradchecks)
  return o;
}

Tensor parameter(const Module& m, const std::string& name) {
  for (const auto& [k, v] : m.named_parameters())
    if (k == name) return v.detach();
  ADD_FAILURE() << "no parameter " << name;
  return Tensor();
}

void expect_all_near(const Tensor& a, const Tensor& b, double tol) {
  ASSERT_EQ(a.shape(), b.shape());
  std::vector<double> va = a.to_vector(), vb = b.to_vector();
  for (size_t i = 0; i < va.size(); ++i) ASSERT_NEAR(va[i], vb[i], tol) << "element " << i;
}

// Sum of |a - b| over features of token t (example 0).
double token_diff(const Tensor& a, const Tensor& b, int64_t t) {
  double diff = 0;
  for (int64_t k = 0; k < a.size(2); ++k) diff += std::abs(a.at({0, t, k}) - b.at({0, t, k}));
  return diff;
}

TEST(BlockLength, AutoIsCeilOfCubeRootOfTwoN) {
  // r = ceil(cbrt(2n)) by hand: cbrt(2) = 1.26, cbrt(8) = 2, cbrt(10) = 2.15,
  // cbrt(26) = 2.96, cbrt(28) = 3.04, cbrt(64) = 4, cbrt(66) = 4.04,
  // cbrt(124) = 4.99, cbrt(126) = 5.01.
  const std::vector<std::pair<int64_t, int64_t>> cases = {{1, 2},  {4, 2},  {5, 3},  {13, 3}, {14, 4},
                                                          {32, 4}, {33, 5}, {62, 5}, {63, 6}};
  for (const auto& [n, r] : cases) EXPECT_EQ(block_length_auto(n), r) << "n = " << n;
  // The defining property for many n: r^3 >= 2n > (r-1)^3.
  for (int64_t n = 1; n <= 3000; ++n) {
    int64_t r = block_length_auto(n);
    ASSERT_GE(r * r * r, 2 * n);
    ASSERT_LT((r - 1) * (r - 1) * (r - 1), 2 * n);
  }
  EXPECT_THAT(error_of([] { block_length_auto(0); }), HasSubstr("must be positive"));
}

TEST(BlockLength, DistributionUsesTheExpectedLongestSentence) {
  // r = ceil(cbrt(2 (sigma sqrt(2 ln B) + mu))).
  // mu 20, sigma 5, B 64: 2 (5 * 2.884 + 20) = 68.84, cbrt = 4.10 -> 5.
  EXPECT_EQ(block_length_from_distribution(20, 5, 64), 5);
  // mu 30, sigma 10, B 128: 2 (10 * 3.115 + 30) = 122.3, cbrt = 4.96 -> 5.
  EXPECT_EQ(block_length_from_distribution(30, 10, 128), 5);
  // B = 1 (ln 1 = 0) or sigma = 0: the auto rule at n = mu; 2 * 4 = 8 is a perfect cube.
  EXPECT_EQ(block_length_from_distribution(10, 3, 1), block_length_auto(10));
  EXPECT_EQ(block_length_from_distribution(4, 0, 32), 2);
  const double exact = std::cbrt(2 * (7.5 * std::sqrt(2 * std::log(50.0)) + 41));
  EXPECT_EQ(block_length_from_distribution(41, 7.5, 50), static_cast<int64_t>(std::ceil(exact)));
  EXPECT_THAT(error_of([] { block_length_from_distribution(20, -1, 64); }), HasSubstr("length_std"));
  EXPECT_THAT(error_of([] { block_length_from_distribution(0, 1, 64); }), HasSubstr("length_mean"));
  EXPECT_THAT(error_of([] { block_length_from_distribution(20, 1, 0); }), HasSubstr("batch_for_r"));
  // A huge mean is an error naming it, never an endless search: up to a
  // million tokens the rule still answers (2 * 5e5 = 100^3 exactly).
  EXPECT_THAT(error_of([] { block_length_from_distribution(1e300, 0, 64); }),
              HasSubstr("length_mean 1e+300 and length_std 0 put the longest expected sentence at"));
  EXPECT_EQ(block_length_from_distribution(5e5, 0, 1), 100);
  EXPECT_EQ(block_length_from_distribution(5e5 + 1, 0, 1), 101);
}

TEST(BlockLength, BuilderModes) {
  Generator init(1), noise(2);
  EncoderContext ctx{3, DType::F64, &init, &noise};
  auto r_of = [&](const std::string& text, int64_t n) {
    Config c = Config::parse(text);
    auto enc = build_biblosan_encoder(c, ctx);
    c.check_all_used("biblosan");
    return dynamic_cast<BiBlosan&>(*enc).block_length(n);
  };
  EXPECT_EQ(r_of("hidden = 3", 5), 3);
  EXPECT_EQ(r_of("hidden = 3", 63), 6);
  EXPECT_EQ(r_of("hidden = 3\nblock_len_mode = auto", 14), 4);
  EXPECT_EQ(r_of("hidden = 3\nblock_len = 4", 5), 4);
  EXPECT_EQ(r_of("hidden = 3\nblock_len = 4", 100), 4);
  EXPECT_EQ(r_of("hidden = 3\nblock_len_mode = fixed\nblock_len = 2", 5), 2);
  EXPECT_EQ(r_of("hidden = 3\nblock_len_mode = distribution\nlength_mean = 20\nlength_std = 5\nbatch_for_r = 64", 3),
            5);
}

TEST(BiBlosan, GradcheckAllParametersAndInputsWithPadding) {
  // Both attentions need queries with two or more keys, or their score
  // parameters get no gradient (a softmax over one key is constant): m >= 3
  // and r >= 3. Auto r for n = 9 is 3: three full blocks, and the second
  // example has a full, a partial and an empty block. Fixed r = 4 on n = 10:
  // blocks of 4, 4 and 2 tokens (a last block of one token would have h = 0
  // in the forward direction, and so v = 0), the second example's last two
  // blocks empty.
  for (BlockLenRule rule : {BlockLenRule::automatic(), BlockLenRule::fixed_length(4)}) {
    const bool automatic = rule.mode == BlockLenMode::Auto;
    const int64_t n = automatic ? 9 : 10;
    Generator gen(1);
    BiBlosan model(3, options(3, rule), gen, DType::F64);
    Tensor x = random_input({2, n, 3}, 2);
    Tensor mask = length_mask({n, automatic ? int64_t{5} : int64_t{3}}, n);
    SCOPED_TRACE(block_len_mode_name(rule.mode));
    expect_gradcheck(model, x, [&] { return flat_outputs(model.encode(x, mask)); });
  }
}

TEST(BiBlosan, PaddedPositionsChangeNoValidOutput) {
  for (BlockLenRule rule : {BlockLenRule::automatic(), BlockLenRule::fixed_length(2)}) {
    Generator gen(3);
    BiBlosan model(3, options(4, rule), gen, DType::F64);
    expect_padding_invariant(model, random_input({3, 7, 3}, 4), length_mask({7, 3, 0}, 7));
  }
}

TEST(BiBlosan, EmptySequenceGivesZerosAndFiniteGradients) {
  Generator gen(7);
  BiBlosan model(3, options(3, BlockLenRule::fixed_length(2)), gen, DType::F64);
  Tensor x = random_input({2, 4, 3}, 8);
  Tensor mask = length_mask({0, 1}, 4);  // one empty example, one whose only token has no valid key
  EncoderOutput o = model.encode(x, mask);
  for (double v : o.tokens.to_vector()) ASSERT_TRUE(std::isfinite(v));
  for (double v : o.sentence.to_vector()) ASSERT_TRUE(std::isfinite(v));
  for (int64_t t = 0; t < 4; ++t)
    for (int64_t k = 0; k < 6; ++k) EXPECT_EQ(o.tokens.at({0, t, k}), 0.0);
  for (int64_t k = 0; k < 6; ++k) EXPECT_EQ(o.sentence.at({0, k}), 0.0);
  sum(o.sentence + sum(o.tokens, {1})).backward();
  for (const Tensor& p : model.parameters())
    for (double v : p.grad().to_vector()) ASSERT_TRUE(std::isfinite(v));
  for (double v : x.grad().to_vector()) ASSERT_TRUE(std::isfinite(v));
}

// One mBloSA direction with a single block (m = 1, r >= n), written out from
// the equations with the module's own parameters:
//   x' = act(W_fc x + b_fc)
//   h  = g_m(x', M) over the whole sentence (Eq. 11 with one block)
//   v  = sum_i softmax_i(W_s h_i + b_s) * h_i (Eq. 12, valid tokens only)
//   o  = 0: the single block's forward/backward mask excludes the diagonal,
//        so it has no valid key (Eq. 13)
//   G  = sigmoid(W(g1) * 0 + W(g2) v + b(g)) = sigmoid(W(g2) v + b(g)),
//        W(g2) being the gate's "w1" (GatedFusion(s = v, h = o)),
//   e  = G * 0 + (1 - G) * v = (1 - G) * v (Eq. 14-15)
//   E  = e at every token; u = fusion gate over [x'; h; E] (Eq. 16-18),
//   zero at padded tokens.
Tensor one_block_direction(const BiBlosan& model, const std::string& dir_name, Direction dir, const Tensor& x,
                           const Tensor& mask) {
  auto p = [&](const std::string& name) { return parameter(model, dir_name + name); };
  const int64_t b = x.size(0), n = x.size(1), d = p(".intra_bias").size(0);
  Tensor xp = elu(linear(x, p("_fc.weight"), p("_fc.bias")));
  Tensor h = multi_dim_masked_attention(xp, linear(xp, p(".intra_w1.weight")), linear(xp, p(".intra_w2.weight")),
                                        p(".intra_bias"), pair_mask(mask, direction_mask(n, dir)), 5.0);
  Tensor probs = softmax(linear(h, p(".block_s2t.w.weight"), p(".block_s2t.w.bias")), 1, unsqueeze(mask, -1));
  Tensor v = sum(probs * h, {1});
  Tensor g = sigmoid(linear(v, p(".block_gate.w1.weight")) + p(".block_gate.bias"));
  Tensor e = (1.0 - g) * v;
  Tensor big_e = expand(unsqueeze(e, 1), {b, n, d});
  Tensor both = linear(concat({xp, h, big_e}, -1), p(".fusion.proj.weight"), p(".fusion.proj.bias"));
  Tensor f = elu(narrow(both, -1, 0, d));
  Tensor gate = sigmoid(narrow(both, -1, d, d));
  return zero_padded(gate * f + (1.0 - gate) * xp, mask);
}

TEST(BiBlosan, OneBlockReducesToTheGatedSentenceVector) {
  // r = n and r > n (the block then carries padding of its own).
  for (int64_t r : {5, 8}) {
    Generator gen(11);
    BiBlosan model(4, options(3, BlockLenRule::fixed_length(r)), gen, DType::F64);
    Tensor x = random_input({2, 5, 4}, 12).detach();
    Tensor mask = length_mask({5, 3}, 5);
    EncoderOutput out = model.encode(x, mask);

    Tensor tokens = concat({one_block_direction(model, "fw", Direction::Forward, x, mask),
                            one_block_direction(model, "bw", Direction::Backward, x, mask)},
                           -1);
    expect_all_near(out.tokens, tokens, 1e-12);
    Tensor scores = linear(elu(linear(tokens, parameter(model, "s2t.w1.weight"), parameter(model, "s2t.w1.bias"))),
                           parameter(model, "s2t.w2.weight"), parameter(model, "s2t.w2.bias"));
    Tensor sentence = sum(softmax(scores, 1, unsqueeze(mask, -1)) * tokens, {1});
    expect_all_near(out.sentence, sentence, 1e-12);

    // The inter-block output itself is exactly zero.
    Tensor xp = elu(linear(x, parameter(model, "fw_fc.weight"), parameter(model, "fw_fc.bias")));
    MBlosaStages st = model.forward_mblosa().stages(xp, mask, r);
    EXPECT_EQ(st.blocks, 1);
    for (double v : st.o.to_vector()) EXPECT_EQ(v, 0.0);
  }
}

// The intra-block attention of block 1 (tokens 3..5 of 7, r = 3) sees nothing
// of blocks 0 and 2: editing token 4 leaves h and v of the other blocks
// exactly unchanged, in both directions.
TEST(MBlosa, IntraBlockAttentionStaysInsideItsBlock) {
  for (Direction dir : {Direction::Forward, Direction::Backward}) {
    Generator gen(13);
    MBlosaOptions o;
    o.direction = dir;
    MBlosa block(3, o, gen, DType::F64);
    Tensor x = random_input({1, 7, 3}, 14).detach();
    Tensor mask = length_mask({7}, 7);
    MBlosaStages before = block.stages(x, mask, 3);
    Tensor changed = clone(x);
    for (int64_t k = 0; k < 3; ++k) write_element(changed, 4 * 3 + k, 2.0 - k);
    MBlosaStages after = block.stages(changed, mask, 3);
    ASSERT_EQ(before.h.shape(), Shape({1, 9, 3}));
    for (int64_t t : {0, 1, 2, 6, 7, 8}) EXPECT_EQ(token_diff(before.h, after.h, t), 0.0) << t;
    double inside = 0;
    for (int64_t t : {3, 4, 5}) inside += token_diff(before.h, after.h, t);
    EXPECT_GT(inside, 1e-6) << direction_name(dir);
    for (int64_t l : {0, 2})
      for (int64_t k = 0; k < 3; ++k) EXPECT_EQ(before.v.at({0, l, k}), after.v.at({0, l, k}));
    for (int64_t k = 0; k < 3; ++k) EXPECT_NE(before.v.at({0, 1, k}), after.v.at({0, 1, k}));
  }
}

// Whole mBloSA at block level: every token of the edited block changes (its
// E carries the block vector), later blocks (forward) or earlier blocks
// (backward) change through the inter-block attention, the others do not.
TEST(MBlosa, BlockLevelCausality) {
  for (Direction dir : {Direction::Forward, Direction::Backward}) {
    Generator gen(15);
    MBlosaOptions o;
    o.direction = dir;
    MBlosa block(3, o, gen, DType::F64);
    Tensor x = random_input({1, 7, 3}, 16).detach();
    Tensor mask = length_mask({7}, 7);
    Tensor before = block.forward(x, mask, 3);
    Tensor changed = clone(x);
    for (int64_t k = 0; k < 3; ++k) write_element(changed, 4 * 3 + k, 2.0 - k);
    Tensor after = block.forward(changed, mask, 3);
    const std::set<int64_t> unchanged = dir == Direction::Forward ? std::set<int64_t>{0, 1, 2} : std::set<int64_t>{6};
    for (int64_t t = 0; t < 7; ++t) {
      if (unchanged.count(t)) {
        EXPECT_EQ(token_diff(before, after, t), 0.0) << direction_name(dir) << " token " << t;
      } else {
        EXPECT_GT(token_diff(before, after, t), 1e-6) << direction_name(dir) << " token " << t;
      }
    }
  }
}

TEST(MBlosa, EmptyBlocksGiveZeroBlockVectors) {
  Generator gen(17);
  MBlosa block(3, MBlosaOptions{}, gen, DType::F64);
  Tensor x = random_input({2, 7, 3}, 18).detach();
  MBlosaStages st = block.stages(x, length_mask({7, 2}, 7), 3);
  EXPECT_EQ(st.blocks, 3);
  EXPECT_EQ(st.block_valid.to_vector(), (std::vector<double>{1, 1, 1, 1, 0, 0}));
  for (int64_t l : {1, 2})
    for (int64_t k = 0; k < 3; ++k) {
      EXPECT_EQ(st.v.at({1, l, k}), 0.0);
      EXPECT_EQ(st.o.at({1, l, k}), 0.0);
      EXPECT_EQ(st.e.at({1, l, k}), 0.0);
    }
  // The first block has no earlier block to attend to (forward).
  for (int64_t k = 0; k < 3; ++k) EXPECT_EQ(st.o.at({0, 0, k}), 0.0);
  for (int64_t k = 0; k < 3; ++k) EXPECT_NE(st.o.at({0, 2, k}), 0.0);
}

// The fusion gate with E given per block (E's third of W applied to the
// block rows, then broadcast) is the gate over [x; h; E] with E repeated:
// the same values and the same gradients for every input and parameter, up
// to the order of float64 sums over 3d products.
TEST(FeatureFusionGate, BlockContextIsTheGateOverRepeatedContext) {
  const int64_t b = 2, m = 3, r = 2, d = 4;
  Generator gen(31);
  FeatureFusionGate gate(d, Activation::Elu, gen, DType::F64);
  Tensor x = random_input({b, m * r, d}, 32), h = random_input({b, m * r, d}, 33), e = random_input({b, m, d}, 34);
  struct Result {
    std::vector<double> out, gx, gh, ge, gw, gbias;
  };
  auto run = [&](bool per_block) {
    Tensor xl = x.detach().set_requires_grad(true), hl = h.detach().set_requires_grad(true),
           el = e.detach().set_requires_grad(true);
    Tensor out = per_block ? gate.forward_block_context(xl, hl, el, r)
                           : gate.forward(xl, hl, reshape(expand(unsqueeze(el, 2), {b, m, r, d}), {b, m * r, d}));
    // Weights that differ per element, so every gradient entry is distinct.
    Tensor weights = rand_uniform(out.shape(), -1, 1, gen, DType::F64);
    sum(out * weights).backward();
    Result res{out.to_vector(), xl.grad().to_vector(), hl.grad().to_vector(), el.grad().to_vector(), {}, {}};
    for (const auto& [name, p] : gate.named_parameters()) {
      (name == "proj.weight" ? res.gw : res.gbias) = p.grad().to_vector();
      p.zero_grad();
    }
    return res;
  };
  Generator keep = gen;
  const Result full = run(false);
  gen = keep;  // the same loss weights for both
  const Result blocks = run(true);
  auto expect_near = [](const std::vector<double>& a, const std::vector<double>& c, const char* what) {
    ASSERT_EQ(a.size(), c.size()) << what;
    double largest = 0;
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_NEAR(a[i], c[i], 1e-12) << what << " element " << i;
      largest = std::max(largest, std::abs(a[i]));
    }
    EXPECT_GT(largest, 1e-3) << what << " is all (near) zero";
  };
  expect_near(full.out, blocks.out, "output");
  expect_near(full.gx, blocks.gx, "d x");
  expect_near(full.gh, blocks.gh, "d h");
  expect_near(full.ge, blocks.ge, "d e");
  expect_near(full.gw, blocks.gw, "d proj.weight");
  expect_near(full.gbias, blocks.gbias, "d proj.bias");

  EXPECT_THAT(error_of([&] { gate.forward_block_context(x, h, e, 4); }), HasSubstr("is not 4-token blocks"));
  EXPECT_THAT(error_of([&] { gate.forward_block_context(x, h, e, 0); }), HasSubstr("block length must be positive"));
  EXPECT_THAT(error_of([&] { gate.forward_block_context(x, e, e, 2); }), HasSubstr("expects x and h"));
}

TEST(BiBlosan, Float32MatchesFloat64) {
  Generator g64(19), g32(19);
  BiBlosan m64(3, options(4, BlockLenRule::automatic()), g64, DType::F64);
  BiBlosan m32(3, options(4, BlockLenRule::automatic()), g32, DType::F32);
  Tensor x = random_input({2, 6, 3}, 20).detach();
  Tensor mask = length_mask({6, 4}, 6);
  EncoderOutput a = m64.encode(x, mask), b = m32.encode(cast(x, DType::F32), mask);
  EXPECT_EQ(b.tokens.dtype(), DType::F32);
  expect_all_near(a.tokens, cast(b.tokens, DType::F64), 1e-4);
  expect_all_near(a.sentence, cast(b.sentence, DType::F64), 1e-4);
}

TEST(BiBlosan, ParameterNamesAndSizes) {
  Generator gen(21);
  BiBlosan model(3, options(4, BlockLenRule::automatic()), gen, DType::F64);
  std::set<std::string> names;
  for (const auto& [k, v] : model.named_parameters()) names.insert(k);
  for (const char* name : {"fw_fc.weight", "bw_fc.bias", "fw.intra_w1.weight", "fw.intra_bias", "fw.block_s2t.w.weight",
                           "bw.inter_w2.weight", "bw.inter_bias", "fw.block_gate.w1.weight", "bw.block_gate.bias",
                           "fw.fusion.proj.weight", "s2t.w2.bias"})
    EXPECT_TRUE(names.count(name)) << name;
  EXPECT_EQ(model.token_dim(), 8);
  EXPECT_EQ(model.sentence_dim(), 8);
  EncoderOutput o = model.encode(random_input({2, 5, 3}, 22).detach(), length_mask({5, 5}, 5));
  EXPECT_EQ(o.tokens.shape(), Shape({2, 5, 8}));
  EXPECT_EQ(o.sentence.shape(), Shape({2, 8}));
}

TEST(BiBlosan, ConfigAndShapeErrors) {
  Generator init(23), noise(24);
  EncoderContext ctx{3, DType::F64, &init, &noise};
  auto build_error = [&](const std::string& text) {
    return error_of([&] { build_biblosan_encoder(Config::parse(text), ctx); });
  };
  EXPECT_THAT(build_error("block_len_mode = fixed"), HasSubstr("needs block_len"));
  EXPECT_THAT(build_error("block_len = 0"), HasSubstr("key 'block_len' of biblosan must lie in 1..1048576, got '0'"));
  EXPECT_THAT(build_error("block_len_mode = blocks"),
              HasSubstr("key 'block_len_mode' of biblosan must be one of auto, fixed, distribution, got 'blocks'"));
  EXPECT_THAT(build_error("block_len_mode = distribution\nlength_mean = 20\nbatch_for_r = 8"),
              HasSubstr("needs length_std"));
  EXPECT_THAT(build_error("hidden = 0"), HasSubstr("key 'hidden' of biblosan must lie in 1..65536, got '0'"));
  // A block length given while the mode is auto is reported as unused.
  Config c = Config::parse("hidden = 3\nblock_len_mode = auto\nblock_len = 4");
  build_biblosan_encoder(c, ctx);
  EXPECT_THAT(error_of([&] { c.check_all_used("biblosan"); }), HasSubstr("block_len"));

  Generator gen(25);
  BiBlosan model(3, options(3, BlockLenRule::automatic()), gen, DType::F64);
  Tensor mask = length_mask({4}, 4);
  EXPECT_THAT(error_of([&] { model.encode(random_input({4, 3}, 1), mask); }), HasSubstr("expects x of shape"));
  EXPECT_THAT(error_of([&] { model.encode(random_input({1, 4, 5}, 1), mask); }), HasSubstr("[1, 4, 5]"));
  EXPECT_THAT(error_of([&] { model.encode(random_input({1, 3, 3}, 1), mask); }), HasSubstr("does not match"));
  MBlosa block(3, MBlosaOptions{}, gen, DType::F64);
  EXPECT_THAT(error_of([&] {
                block.forward(random_input({1, 4, 3}, 1), mask, 0);
              }),
              HasSubstr("block length must be positive"));
  EXPECT_THAT(error_of([&] {
                block.forward(random_input({1, 4, 3}, 1), cast(mask, DType::F64), 2);
              }),
              HasSubstr("mask must be uint8"));
  MBlosaOptions none;
  none.direction = Direction::None;
  EXPECT_THAT(error_of([&] { MBlosa bad(3, none, gen, DType::F64); }), HasSubstr("forward or backward"));
}

}  // namespace
}  // namespace attn
