// Multi-Scale Transformer: scale parsing and radii, Eq. 11-12 head counts,
// the window attention against dense masked attention (w >= n, narrow
// windows, per-example ratio scales), its linear memory, the [CLS] +
// max-pool readout, the encoder end to end and config errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "test_util.h"
#include "attn/engine/allocator.h"
#include "attn/engine/error.h"
#include "model_checks.h"
#include "seeded_encoder_context.h"
#include "attn/models/multi_head.h"
#include "attn/models/multiscale.h"
#include "attn/ops/binary/binary.h"
#include "attn/engine/copy.h"
#include "attn/ops/matmul/matmul.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/ops/view/view.h"

namespace attn {
namespace {

using namespace testing_support;

using ::testing::HasSubstr;

Tensor heads_input(const Shape& shape, uint64_t seed) {
  Generator g(seed);
  return rand_uniform(shape, -1, 1, g, DType::F64);
}

void expect_all_near(const Tensor& a, const Tensor& b, double tol) {
  ASSERT_EQ(a.shape(), b.shape());
  std::vector<double> x = a.to_vector(), y = b.to_vector();
  for (size_t i = 0; i < x.size(); ++i) ASSERT_NEAR(x[i], y[i], tol) << "element " << i;
}

TEST(MultiScale, ScalesParseAsOddWindowSizesOrRatios) {
  std::vector<Scale> s = parse_scales("1, 3,n/16,N/8, n");
  ASSERT_EQ(s.size(), 5u);
  EXPECT_EQ(s[0].name(), "1");
  EXPECT_EQ(s[1].name(), "3");
  EXPECT_EQ(s[2].name(), "n/16");
  EXPECT_EQ(s[3].name(), "n/8");
  EXPECT_EQ(s[4].name(), "n/1");
  // Window size w covers w tokens: radius (w - 1) / 2, whatever the length.
  EXPECT_EQ(s[0].radius(50), 0);
  EXPECT_EQ(s[1].radius(50), 1);
  // N / k rounded to the odd size 2r+1 with r = floor(N / 2k): 100/16 = 6.25 -> 7,
  // 80/16 = 5 -> 5, 96/16 = 6 -> 7, and below 2k tokens the token alone.
  EXPECT_EQ(s[2].radius(100), 3);
  EXPECT_EQ(s[2].radius(80), 2);
  EXPECT_EQ(s[2].radius(96), 3);
  EXPECT_EQ(s[2].radius(31), 0);
  EXPECT_EQ(s[4].radius(7), 3);  // n: the window of the whole sentence around its middle
  EXPECT_THAT(error_of([] { parse_scales("1,4"); }), HasSubstr("scale 4 in '1,4' must be an odd window size"));
  EXPECT_THAT(error_of([] { parse_scales("3,n/0"); }), HasSubstr("scale 'n/0' in '3,n/0' is not a window size"));
  EXPECT_THAT(error_of([] { parse_scales("3,wide"); }), HasSubstr("scale 'wide'"));
  EXPECT_THAT(error_of([] { parse_scales("-3"); }), HasSubstr("scale '-3'"));
}

TEST(MultiScale, HeadCountsFollowEquations11And12) {
  // The paper's example (alpha 0.5, 10 heads, 3 layers, 5 scales) under our
  // reading of Eq. 11; the paper prints {5,2,2,1,0}, {4,2,2,1,1}, {2,2,2,2,2}
  // (see the Multi-Scale Transformer section of docs/models.md for why no softmax rounding gives those).
  std::vector<std::vector<int64_t>> c = scale_head_counts(3, 5, 10, 0.5);
  EXPECT_EQ(c, (std::vector<std::vector<int64_t>>{{4, 3, 1, 1, 1}, {3, 2, 2, 2, 1}, {2, 2, 2, 2, 2}}));
  // alpha = 0: every layer uniform; a single layer is the top layer.
  EXPECT_EQ(scale_head_counts(2, 5, 10, 0.0), (std::vector<std::vector<int64_t>>(2, {2, 2, 2, 2, 2})));
  EXPECT_EQ(scale_head_counts(1, 3, 6, 2.0), (std::vector<std::vector<int64_t>>{{2, 2, 2}}));
  // Negative alpha mirrors the preference towards large scales.
  std::vector<std::vector<int64_t>> neg = scale_head_counts(3, 5, 10, -0.5);
  EXPECT_EQ(neg[0], (std::vector<int64_t>{1, 1, 1, 3, 4}));
  // Hand check of layer 1 at alpha = 1, 2 layers, 3 scales, 4 heads:
  // z = (2, 1, 0), softmax * 4 = (2.66, 0.98, 0.36) -> floors (2, 0, 0); the
  // two heads left go to the largest remainders, .98 then .66 -> (3, 1, 0).
  EXPECT_EQ(scale_head_counts(2, 3, 4, 1.0)[0], (std::vector<int64_t>{3, 1, 0}));
  for (const auto& row : scale_head_counts(4, 5, 12, 0.8)) {
    int64_t total = 0;
    for (int64_t v : row) total += v;
    EXPECT_EQ(total, 12);
  }
}

// Radius >= n: every query sees the whole sentence, so the window kernel is
// exactly full masked dot-product attention.
TEST(WindowAttention, WindowCoveringTheSentenceEqualsFullMaskedAttention) {
  const int64_t n = 6;
  Tensor q = heads_input({3, 2, n, 4}, 1), k = heads_input({3, 2, n, 4}, 2), v = heads_input({3, 2, n, 4}, 3);
  Tensor valid = length_mask({6, 4, 1}, n);
  Tensor full = scaled_dot_product_attention(q, k, v, unsqueeze(unsqueeze(valid, 1), 1));
  for (int64_t r : {int64_t{5}, int64_t{6}, int64_t{100}})
    expect_all_near(window_attention(q, k, v, valid, {r, r, r}), full, 1e-10);
  // Per-example radii that each reach the whole (shorter) sentence from every
  // valid query (padded queries, zeroed by the callers, may see less).
  Tensor per_example = window_attention(q, k, v, valid, {5, 3, 0});
  for (int64_t b = 0; b < 3; ++b)
    for (int64_t c = 0; c < 2; ++c)
      for (int64_t t = 0; t < n; ++t)
        for (int64_t l = 0; l < 4; ++l)
          if (valid.at({b, t}) != 0) {
            EXPECT_NEAR(per_example.at({b, c, t, l}), full.at({b, c, t, l}), 1e-10);
          }
}

// A narrow window equals dense attention under the |i - j| <= r mask, with
// a different radius per example and padded keys.
TEST(WindowAttention, NarrowWindowsEqualDenseBandMaskedAttention) {
  const int64_t n = 7;
  Tensor q = heads_input({2, 3, n, 2}, 4), k = heads_input({2, 3, n, 2}, 5), v = heads_input({2, 3, n, 2}, 6);
  Tensor valid = length_mask({7, 5}, n);
  Tensor got = window_attention(q, k, v, valid, {1, 2});
  for (int64_t b = 0; b < 2; ++b) {
    Tensor band = pair_mask(narrow(valid, 0, b, 1), window_mask(n, b == 0 ? 1 : 2));  // [1, n, n]
    Tensor dense = scaled_dot_product_attention(narrow(q, 0, b, 1), narrow(k, 0, b, 1), narrow(v, 0, b, 1),
                                                unsqueeze(band, 1));
    Tensor mine = narrow(got, 0, b, 1);
    for (int64_t c = 0; c < 3; ++c)
      for (int64_t t = 0; t < (b == 0 ? 7 : 5); ++t)  // padded queries: dense rows are zero by pair_mask
        for (int64_t l = 0; l < 2; ++l) EXPECT_NEAR(mine.at({0, c, t, l}), dense.at({0, c, t, l}), 1e-12);
  }
  // Radius 0: each valid token returns its own value; a padded one, whose
  // only key is padding, zeros.
  Tensor self = window_attention(q, k, v, valid, {0, 0});
  expect_all_near(self, mul(v, unsqueeze(unsqueeze(cast(valid, DType::F64), 1), -1)), 1e-15);
}

TEST(WindowAttention, GradcheckWithPaddingAndTwoRadii) {
  Tensor q = heads_input({2, 2, 5, 3}, 7).set_requires_grad(true);
  Tensor k = heads_input({2, 2, 5, 3}, 8).set_requires_grad(true);
  Tensor v = heads_input({2, 2, 5, 3}, 9).set_requires_grad(true);
  Tensor valid = length_mask({5, 3}, 5);
  OpCase c;
  c.label = "window_attention";
  c.inputs = {q, k, v};
  c.fn = [&](const std::vector<Tensor>& in) { return window_attention(in[0], in[1], in[2], valid, {1, 2}); };
  CaseResult r = gradcheck_case(c, Tolerance{});
  EXPECT_TRUE(r.passed) << r.failure;
}

// The kernel never builds n x n: at fixed window and head width, the peak
// memory of one forward grows 4x when n grows 4x (16x would be quadratic).
TEST(WindowAttention, PeakMemoryGrowsLinearlyInLength) {
  auto peak_of = [](int64_t n) {
    Tensor q = heads_input({2, 2, n, 8}, 10), k = heads_input({2, 2, n, 8}, 11), v = heads_input({2, 2, n, 8}, 12);
    for (Tensor* t : {&q, &k, &v}) t->set_requires_grad(true);
    Tensor valid = length_mask({n, n / 2}, n);
    Allocator& alloc = allocator_for(Device::CPU);
    const int64_t before = alloc.stats().current_bytes;
    alloc.reset_peak();
    Tensor out = window_attention(q, k, v, valid, {3, 3});
    const int64_t peak = alloc.stats().peak_bytes - before;
    EXPECT_EQ(out.shape(), Shape({2, 2, n, 8}));
    return peak;
  };
  const int64_t small = peak_of(64), big = peak_of(256);
  const double ratio = static_cast<double>(big) / static_cast<double>(small);
  EXPECT_GT(ratio, 3.0) << big << " vs " << small;
  EXPECT_LT(ratio, 6.0) << big << " vs " << small << " bytes: superlinear growth";
  // Far below one [B, h, n, n] score tensor at n = 256 times the head width.
  EXPECT_LT(big, 2 * 2 * 256 * 256 * 8 * 8 / 4);
}

TEST(MultiScaleAttention, ScaleOneSeesOnlyTheTokenItself) {
  // Window size 1: softmax over one key is 1, so the head returns W_O W_V x_t.
  Generator gen(13);
  MultiScaleAttention msmsa(4, parse_scales("1"), {2}, gen, DType::F64);
  Tensor x = random_input({1, 5, 4}, 14).detach();
  Tensor y = msmsa.forward(x, length_mask({5}, 5));
  auto p = params_of(msmsa);
  Tensor expected = matmul(matmul(x, transpose(p["v.weight"], 0, 1)), transpose(p["out.weight"], 0, 1));
  expect_all_near(y, expected, 1e-12);
}

// Heads of scale 3 see one neighbour each side: with layers stacked the
// receptive field grows by one per layer; a token 2 away is invisible to one layer.
TEST(MultiScaleAttention, SmallScalesAreLocalLargeScalesGlobal) {
  Generator gen(15);
  MultiScaleAttention local(4, parse_scales("1,3"), {1, 1}, gen, DType::F64);
  MultiScaleAttention global(4, parse_scales("1,n"), {1, 1}, gen, DType::F64);
  Tensor x = random_input({1, 6, 4}, 16).detach();
  Tensor mask = length_mask({6}, 6);
  Tensor changed = x.detach();
  Tensor before_local = local.forward(x, mask), before_global = global.forward(x, mask);
  changed = add(x, zeros({1, 6, 4}, DType::F64));
  for (int64_t k = 0; k < 4; ++k) write_element(changed, 5 * 4 + k, 2.0 + k);  // edit the last token
  Tensor after_local = local.forward(changed, mask), after_global = global.forward(changed, mask);
  auto change_at = [](const Tensor& a, const Tensor& b, int64_t t) {
    double d = 0;
    for (int64_t k = 0; k < 4; ++k) d += std::abs(a.at({0, t, k}) - b.at({0, t, k}));
    return d;
  };
  for (int64_t t = 0; t < 4; ++t) EXPECT_EQ(change_at(before_local, after_local, t), 0.0) << "token " << t;
  EXPECT_GT(change_at(before_local, after_local, 4), 1e-6);
  // n over 6 tokens: radius 3, so token 2 sees token 5 but token 1 does not.
  EXPECT_EQ(change_at(before_global, after_global, 1), 0.0);
  EXPECT_GT(change_at(before_global, after_global, 2), 1e-6);
}

MultiScaleOptions small_options() {
  MultiScaleOptions o;
  o.hidden = 4;
  o.layers = 2;
  o.scales = parse_scales("1,3,n");
  o.head_counts = {{1, 1, 0}, {0, 1, 1}};
  return o;
}

TEST(MultiScaleTransformer, GradcheckAllParametersAndInputsWithPadding) {
  Generator init(17), noise(18);
  MultiScaleTransformer model(3, small_options(), init, noise, DType::F64);
  Tensor x = random_input({2, 5, 3}, 19);
  Tensor mask = length_mask({5, 3}, 5);
  expect_gradcheck(model, x, [&] { return flat_outputs(model.encode(x, mask)); });
}

TEST(MultiScaleTransformer, GradcheckFromEquation11Counts) {
  Generator init(20), noise(21);
  MultiScaleOptions o;
  o.hidden = 4;
  o.layers = 2;
  o.heads = 2;
  o.alpha = 3.0;  // layer 1: z = (3, 0), 2 heads -> (1.9, 0.1) -> (2, 0)
  o.scales = parse_scales("3,n/2");
  MultiScaleTransformer model(4, o, init, noise, DType::F64);
  EXPECT_EQ(model.layer(0).attention().head_counts(), (std::vector<int64_t>{2, 0}));
  EXPECT_EQ(model.layer(1).attention().head_counts(), (std::vector<int64_t>{1, 1}));
  Tensor x = random_input({2, 6, 4}, 22);
  Tensor mask = length_mask({6, 4}, 6);
  expect_gradcheck(model, x, [&] { return flat_outputs(model.encode(x, mask)); });
}

TEST(MultiScaleTransformer, PaddedPositionsChangeNoValidOutput) {
  Generator init(23), noise(24);
  MultiScaleTransformer model(3, small_options(), init, noise, DType::F64);
  expect_padding_invariant(model, random_input({3, 6, 3}, 25), length_mask({6, 2, 0}, 6));
}

TEST(MultiScaleTransformer, EmptySequenceGivesZerosAndFiniteGradients) {
  Generator init(26), noise(27);
  MultiScaleTransformer model(3, small_options(), init, noise, DType::F64);
  Tensor x = random_input({2, 3, 3}, 28);
  EncoderOutput o = model.encode(x, length_mask({0, 2}, 3));
  for (int64_t k = 0; k < 8; ++k) EXPECT_EQ(o.sentence.at({0, k}), 0.0);
  for (int64_t t = 0; t < 3; ++t)
    for (int64_t k = 0; k < 4; ++k) EXPECT_EQ(o.tokens.at({0, t, k}), 0.0);
  for (double v : o.sentence.to_vector()) ASSERT_TRUE(std::isfinite(v));
  (sum(o.sentence * o.sentence) + sum(o.tokens)).backward();
  for (const Tensor& p : model.parameters())
    for (double v : p.grad().to_vector()) ASSERT_TRUE(std::isfinite(v));
  for (double v : x.grad().to_vector()) ASSERT_TRUE(std::isfinite(v));
}

// sentence = [CLS output ; max over the valid tokens], tokens exclude [CLS].
TEST(MultiScaleTransformer, ReadoutIsClsAndMaxPoolOverValidTokens) {
  Generator init(29), noise(30);
  MultiScaleTransformer model(3, small_options(), init, noise, DType::F64);
  Tensor x = random_input({2, 5, 3}, 31).detach();
  EncoderOutput o = model.encode(x, length_mask({5, 2}, 5));
  ASSERT_EQ(o.tokens.shape(), Shape({2, 5, 4}));
  ASSERT_EQ(o.sentence.shape(), Shape({2, 8}));
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t k = 0; k < 4; ++k) {
      double mx = -1e300;
      for (int64_t t = 0; t < (b == 0 ? 5 : 2); ++t) mx = std::max(mx, o.tokens.at({b, t, k}));
      EXPECT_EQ(o.sentence.at({b, 4 + k}), mx);
    }
  // The [CLS] half is not any token's output and changes with the learned vector.
  std::vector<double> before = o.sentence.to_vector();
  axpy_(model.cls, 1.0, full({4}, 0.5, DType::F64));
  std::vector<double> after = model.encode(x, length_mask({5, 2}, 5)).sentence.to_vector();
  double diff = 0;
  for (size_t i = 0; i < 4; ++i) diff += std::abs(before[i] - after[i]);
  EXPECT_GT(diff, 1e-6);
}

// Ratio scales use each example's own length, so an example's outputs do not
// depend on how long the other examples of its batch are.
TEST(MultiScaleTransformer, RatioScalesUseEachSentencesOwnLength) {
  Generator init(32), noise(33);
  MultiScaleOptions o = small_options();
  o.scales = parse_scales("1,n/2,n");
  o.head_counts = {{0, 1, 1}, {1, 1, 0}};
  MultiScaleTransformer model(3, o, init, noise, DType::F64);
  Tensor x = random_input({1, 4, 3}, 34).detach();
  EncoderOutput alone = model.encode(x, length_mask({4}, 4));
  Tensor wide = concat({x, random_input({1, 4, 3}, 35).detach()}, 1);  // padded to 8
  Tensor pair = concat({wide, random_input({1, 8, 3}, 36).detach()}, 0);
  EncoderOutput batched = model.encode(pair, length_mask({4, 8}, 8));
  for (int64_t k = 0; k < 8; ++k) EXPECT_NEAR(alone.sentence.at({0, k}), batched.sentence.at({0, k}), 1e-12);
  for (int64_t t = 0; t < 4; ++t)
    for (int64_t k = 0; k < 4; ++k) EXPECT_NEAR(alone.tokens.at({0, t, k}), batched.tokens.at({0, t, k}), 1e-12);
}

TEST(MultiScaleTransformer, Float32AgreesWithFloat64) {
  Generator i64(37), n64(38), i32(37), n32(38);
  MultiScaleTransformer m64(3, small_options(), i64, n64, DType::F64);
  MultiScaleTransformer m32(3, small_options(), i32, n32, DType::F32);
  Tensor x = random_input({2, 5, 3}, 39).detach();
  Tensor mask = length_mask({5, 3}, 5);
  std::vector<double> a = m64.encode(x, mask).sentence.to_vector();
  std::vector<double> b = m32.encode(cast(x, DType::F32), mask).sentence.to_vector();
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-4);
}

TEST(MultiScaleTransformer, BuilderReadsEveryKeyAndDefaults) {
  SeededEncoderContext ctx(5, 40, 41);
  Config c = Config::parse("hidden = 6\nlayers = 2\nscales = 1, 5, n/4\nhead_counts = 1,1,1, 0,2,1\nkeep_prob = 0.9\n");
  std::unique_ptr<Encoder> enc = build_mstrans_encoder(c, ctx);
  EXPECT_NO_THROW(c.check_all_used("mstrans"));
  auto& ms = dynamic_cast<MultiScaleTransformer&>(*enc);
  EXPECT_EQ(ms.layer(1).attention().head_counts(), (std::vector<int64_t>{0, 2, 1}));
  EXPECT_EQ(enc->token_dim(), 6);
  EXPECT_EQ(enc->sentence_dim(), 12);
  auto p = params_of(*enc);
  EXPECT_EQ(p["proj.weight"].shape(), Shape({6, 5}));
  EXPECT_EQ(p["cls"].shape(), Shape({6}));
  EXPECT_EQ(p["layer1.msmsa.q.weight"].shape(), Shape({6, 6}));
  EXPECT_EQ(p["layer1.msmsa.out.weight"].shape(), Shape({6, 6}));
  EXPECT_EQ(p["layer0.ln.weight"].shape(), Shape({6}));
  EXPECT_EQ(p.count("layer0.msmsa.q.bias"), 0u);
  EncoderOutput o = enc->encode(random_input({2, 4, 5}, 42).detach(), length_mask({4, 2}, 4));
  EXPECT_EQ(o.tokens.shape(), Shape({2, 4, 6}));
  EXPECT_EQ(o.sentence.shape(), Shape({2, 12}));
  // Defaults: hidden 300, 3 layers, scales 1, 3, n/16, n/8, n/4, 10 heads, alpha 0.5.
  std::unique_ptr<Encoder> def = build_mstrans_encoder(Config(), ctx);
  auto& dm = dynamic_cast<MultiScaleTransformer&>(*def);
  EXPECT_EQ(def->token_dim(), 300);
  EXPECT_EQ(dm.layer(0).attention().head_counts(), (std::vector<int64_t>{4, 3, 1, 1, 1}));
  EXPECT_EQ(dm.layer(2).attention().head_counts(), (std::vector<int64_t>{2, 2, 2, 2, 2}));
  EXPECT_EQ(params_of(*def).count("layer3.ln.weight"), 0u);
  EXPECT_EQ(params_of(*def).count("proj.weight"), 1u);
}

TEST(MultiScaleTransformer, ConfigAndShapeErrors) {
  SeededEncoderContext ctx(5, 43, 44);
  auto build = [&](const std::string& text) { return build_mstrans_encoder(Config::parse(text), ctx); };
  EXPECT_THAT(error_of([&] { build("hidden = 300\nheads = 7"); }),
              HasSubstr("features 300 must be a positive multiple of the 7 heads"));
  EXPECT_THAT(error_of([&] { build("scales = 1,2"); }), HasSubstr("must be an odd window size"));
  EXPECT_THAT(error_of([&] { build("layers = 2\nscales = 1,3\nhead_counts = 1,1,1"); }),
              HasSubstr("head_counts has 3 entries; it needs layers x scales = 2 x 2 = 4"));
  EXPECT_THAT(error_of([&] { build("layers = 1\nscales = 1,3\nhead_counts = 1,1\nheads = 2"); }),
              HasSubstr("set either head_counts or heads and alpha"));
  EXPECT_THAT(error_of([&] { build("layers = 1\nscales = 1,3\nhead_counts = 1,-1"); }),
              HasSubstr("key 'head_counts' of mstrans must hold integers in 0..1024, got '1,-1'"));
  EXPECT_THAT(error_of([&] { build("layers = 0"); }),
              HasSubstr("key 'layers' of mstrans must lie in 1..1000, got '0'"));
  EXPECT_THAT(error_of([&] { build("keep_prob = 0"); }),
              HasSubstr("key 'keep_prob' of mstrans must lie in (0, 1], got '0'"));
  std::unique_ptr<Encoder> enc = build("hidden = 4\nheads = 2\nlayers = 1");
  EXPECT_THAT(error_of([&] { enc->encode(zeros({2, 3, 4}, DType::F64), length_mask({3, 3}, 3)); }),
              HasSubstr("expects x [B, n, 5], got [2, 3, 4]"));
  EXPECT_THAT(error_of([&] { enc->encode(zeros({2, 3, 5}, DType::F64), length_mask({3}, 3)); }),
              HasSubstr("mask must be uint8 [B, n] = [2, 3]"));
  Tensor q = heads_input({1, 1, 3, 2}, 45);
  EXPECT_THAT(error_of([&] { window_attention(q, q, q, length_mask({3}, 3), {1, 1}); }),
              HasSubstr("needs one radius per example (1), got 2"));
  EXPECT_THAT(error_of([&] { window_attention(q, q, q, length_mask({3}, 3), {-1}); }),
              HasSubstr("window radius must be >= 0"));
}

}  // namespace
}  // namespace attn
