// Transformer baseline: positional encoding against its formula, multi-head
// attention against a hand-written loop, the encoder end to end (gradcheck,
// padding, empty sentences, order sensitivity, dropout) and config errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>

#include "test_util.h"
#include "attn/engine/error.h"
#include "model_checks.h"
#include "seeded_encoder_context.h"
#include "attn/models/multi_head.h"
#include "attn/models/positional.h"
#include "attn/models/transformer.h"
#include "attn/ops/binary/binary.h"
#include "attn/ops/reduce/reduce.h"

namespace attn {
namespace {

using namespace testing_support;

using ::testing::HasSubstr;

// y = x W^T for x [n, in] (row-major vector) and W [out, in].
std::vector<double> times_transposed(const std::vector<double>& x, int64_t rows, const Tensor& w) {
  const int64_t out = w.size(0), in = w.size(1);
  std::vector<double> y(static_cast<size_t>(rows * out), 0.0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t o = 0; o < out; ++o)
      for (int64_t i = 0; i < in; ++i) y[r * out + o] += x[r * in + i] * w.at({o, i});
  return y;
}

// Multi-head attention of one example written as loops:
// head c: softmax_j(q_c[i] . k_c[j] / sqrt(d_h)) over valid keys j, times v_c[j].
std::vector<double> hand_attention(const Module& mha, const Tensor& x, int64_t example, const Tensor& mask,
                                   int64_t heads) {
  auto p = params_of(mha);
  const int64_t n = x.size(1), d = x.size(2), dh = d / heads;
  std::vector<double> xs;
  for (int64_t t = 0; t < n; ++t)
    for (int64_t k = 0; k < d; ++k) xs.push_back(x.at({example, t, k}));
  std::vector<double> q = times_transposed(xs, n, p["q.weight"]), k = times_transposed(xs, n, p["k.weight"]),
                      v = times_transposed(xs, n, p["v.weight"]);
  std::vector<double> concat(static_cast<size_t>(n * d), 0.0);
  for (int64_t c = 0; c < heads; ++c)
    for (int64_t i = 0; i < n; ++i) {
      std::vector<double> s(static_cast<size_t>(n));
      double mx = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < n; ++j) {
        double dot = 0;
        for (int64_t l = 0; l < dh; ++l) dot += q[i * d + c * dh + l] * k[j * d + c * dh + l];
        s[j] = dot / std::sqrt(static_cast<double>(dh));
        if (mask.at({example, j}) != 0) mx = std::max(mx, s[j]);
      }
      double z = 0;
      for (int64_t j = 0; j < n; ++j) z += mask.at({example, j}) != 0 ? std::exp(s[j] - mx) : 0.0;
      for (int64_t j = 0; j < n; ++j) {
        if (mask.at({example, j}) == 0) continue;
        const double w = std::exp(s[j] - mx) / z;
        for (int64_t l = 0; l < dh; ++l) concat[i * d + c * dh + l] += w * v[j * d + c * dh + l];
      }
    }
  return times_transposed(concat, n, p["out.weight"]);
}

TEST(PositionalEncoding, MatchesTheSinusoidFormula) {
  const int64_t n = 7, d = 6;
  Tensor pe = sinusoidal_positions(n, d, DType::F64);
  ASSERT_EQ(pe.shape(), Shape({n, d}));
  for (int64_t pos = 0; pos < n; ++pos)
    for (int64_t i = 0; i < d; i += 2) {
      const double angle = pos / std::pow(10000.0, static_cast<double>(i) / d);
      EXPECT_NEAR(pe.at({pos, i}), std::sin(angle), 1e-15);
      EXPECT_NEAR(pe.at({pos, i + 1}), std::cos(angle), 1e-15);
    }
  // Hand values: position 0 is (0, 1, 0, 1, ...); PE[2, 2] = sin(2 / 10000^(1/3)).
  EXPECT_EQ(pe.at({0, 0}), 0.0);
  EXPECT_EQ(pe.at({0, 1}), 1.0);
  EXPECT_NEAR(pe.at({2, 2}), std::sin(2.0 / 21.544346900318832), 1e-12);
  // An odd width ends with a sine; float32 is the same table rounded.
  Tensor odd = sinusoidal_positions(4, 5, DType::F32);
  EXPECT_NEAR(odd.at({3, 4}), std::sin(3.0 / std::pow(10000.0, 4.0 / 5.0)), 1e-7);
  EXPECT_THAT(error_of([] { sinusoidal_positions(3, 0); }), HasSubstr("needs n >= 0 and d > 0"));
}

TEST(MultiHeadAttention, OneHeadEqualsHandWrittenSingleHeadAttention) {
  Generator gen(1);
  MultiHeadAttention mha(3, 1, gen, DType::F64);
  Tensor x = random_input({2, 4, 3}, 2).detach();
  Tensor mask = length_mask({4, 3}, 4);
  Tensor y = mha.forward(x, mask);
  for (int64_t b = 0; b < 2; ++b) {
    std::vector<double> expected = hand_attention(mha, x, b, mask, 1);
    for (int64_t t = 0; t < 4; ++t)
      for (int64_t k = 0; k < 3; ++k) {
        if (mask.at({b, t}) == 0) {
          EXPECT_EQ(y.at({b, t, k}), 0.0) << "padded query";
        } else {
          EXPECT_NEAR(y.at({b, t, k}), expected[t * 3 + k], 1e-12);
        }
      }
  }
}

TEST(MultiHeadAttention, HeadsSplitTheFeaturesIntoIndependentSubspaces) {
  Generator gen(3);
  MultiHeadAttention mha(6, 3, gen, DType::F64);
  Tensor x = random_input({2, 5, 6}, 4).detach();
  Tensor mask = length_mask({5, 2}, 5);
  Tensor y = mha.forward(x, mask);
  for (int64_t b = 0; b < 2; ++b) {
    std::vector<double> expected = hand_attention(mha, x, b, mask, 3);
    for (int64_t t = 0; t < (b == 0 ? 5 : 2); ++t)
      for (int64_t k = 0; k < 6; ++k) EXPECT_NEAR(y.at({b, t, k}), expected[t * 6 + k], 1e-12);
  }
  // Parameters: four bias-free D x D projections.
  auto p = params_of(mha);
  ASSERT_EQ(p.size(), 4u);
  for (const char* name : {"q.weight", "k.weight", "v.weight", "out.weight"}) EXPECT_EQ(p[name].shape(), Shape({6, 6}));
}

TEST(MultiHeadAttention, ScaledDotProductAttentionWithNoAllowedKeyGivesZeros) {
  Generator g(5);
  Tensor q = rand_uniform({1, 1, 3, 2}, -1, 1, g, DType::F64), k = rand_uniform({1, 1, 3, 2}, -1, 1, g, DType::F64);
  Tensor v = rand_uniform({1, 1, 3, 2}, -1, 1, g, DType::F64);
  Tensor none = zeros({1, 1, 1, 3}, DType::U8);
  for (double e : scaled_dot_product_attention(q, k, v, none).to_vector()) EXPECT_EQ(e, 0.0);
  EXPECT_THAT(error_of([&] { scaled_dot_product_attention(q, reshape(k, {1, 3, 2}), v, none); }),
              HasSubstr("q, k, v must be [B, h, n, d_h]"));
}

TransformerOptions small_options(int64_t layers) {
  TransformerOptions o;
  o.hidden = 4;
  o.heads = 2;
  o.layers = layers;
  o.ffn_dim = 5;
  return o;
}

TEST(Transformer, GradcheckAllParametersAndInputsWithPadding) {
  Generator init(7), noise(8);
  Transformer model(3, small_options(2), init, noise, DType::F64);
  Tensor x = random_input({2, 4, 3}, 9);
  Tensor mask = length_mask({4, 2}, 4);
  expect_gradcheck(model, x, [&] { return flat_outputs(model.encode(x, mask)); });
}

TEST(Transformer, GradcheckWithoutInputProjection) {
  Generator init(10), noise(11);
  Transformer model(4, small_options(1), init, noise, DType::F64);
  EXPECT_EQ(params_of(model).count("proj.weight"), 0u);
  Tensor x = random_input({2, 5, 4}, 12);
  Tensor mask = length_mask({3, 5}, 5);
  expect_gradcheck(model, x, [&] { return flat_outputs(model.encode(x, mask)); });
}

TEST(Transformer, PaddedPositionsChangeNoValidOutput) {
  Generator init(13), noise(14);
  Transformer model(3, small_options(2), init, noise, DType::F64);
  expect_padding_invariant(model, random_input({3, 5, 3}, 15), length_mask({5, 2, 0}, 5));
}

TEST(Transformer, EmptySequenceGivesZerosAndFiniteGradients) {
  Generator init(16), noise(17);
  Transformer model(3, small_options(2), init, noise, DType::F64);
  Tensor x = random_input({2, 3, 3}, 18);
  EncoderOutput o = model.encode(x, length_mask({0, 2}, 3));
  for (int64_t k = 0; k < 4; ++k) EXPECT_EQ(o.sentence.at({0, k}), 0.0);
  for (double v : o.tokens.to_vector()) ASSERT_TRUE(std::isfinite(v));
  for (int64_t t = 0; t < 3; ++t)
    for (int64_t k = 0; k < 4; ++k) EXPECT_EQ(o.tokens.at({0, t, k}), 0.0);
  (sum(o.sentence * o.sentence) + sum(o.tokens)).backward();
  for (const Tensor& p : model.parameters())
    for (double v : p.grad().to_vector()) ASSERT_TRUE(std::isfinite(v));
  for (double v : x.grad().to_vector()) ASSERT_TRUE(std::isfinite(v));
}

// Attention alone is order-blind; the positional encoding is what tells two
// copies of the same word at different positions apart.
TEST(Transformer, PositionalEncodingMakesEqualTokensDiffer) {
  Generator init(19), noise(20);
  Transformer model(4, small_options(1), init, noise, DType::F64);
  Tensor x = random_input({1, 3, 4}, 21).detach();
  for (int64_t k = 0; k < 4; ++k) write_element(x, 2 * 4 + k, x.at({0, 0, k}));  // token 2 = token 0
  EncoderOutput o = model.encode(x, length_mask({3}, 3));
  double diff = 0;
  for (int64_t k = 0; k < 4; ++k) diff += std::abs(o.tokens.at({0, 0, k}) - o.tokens.at({0, 2, k}));
  EXPECT_GT(diff, 1e-3);
}

TEST(Transformer, DropoutOnlyInTraining) {
  Generator init(22), noise(23);
  TransformerOptions o = small_options(1);
  o.keep_prob = 0.5;
  Transformer model(3, o, init, noise, DType::F64);
  Tensor x = random_input({2, 4, 3}, 24).detach();
  Tensor mask = length_mask({4, 3}, 4);
  model.set_training(false);
  std::vector<double> a = model.encode(x, mask).sentence.to_vector(), b = model.encode(x, mask).sentence.to_vector();
  EXPECT_EQ(a, b);
  model.set_training(true);
  std::vector<double> c = model.encode(x, mask).sentence.to_vector();
  double diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff += std::abs(a[i] - c[i]);
  EXPECT_GT(diff, 1e-6);
}

TEST(Transformer, BuilderReadsEveryKeyAndDefaults) {
  SeededEncoderContext ctx(5, 25, 26);
  Config c = Config::parse("hidden = 6\nheads = 3\nlayers = 2\nffn_dim = 7\nkeep_prob = 0.9\n");
  std::unique_ptr<Encoder> enc = build_transformer_encoder(c, ctx);
  EXPECT_NO_THROW(c.check_all_used("transformer"));
  EXPECT_EQ(enc->token_dim(), 6);
  EXPECT_EQ(enc->sentence_dim(), 6);
  auto p = params_of(*enc);
  EXPECT_EQ(p["proj.weight"].shape(), Shape({6, 5}));
  EXPECT_EQ(p["layer1.attn.q.weight"].shape(), Shape({6, 6}));
  EXPECT_EQ(p["layer1.ffn1.weight"].shape(), Shape({7, 6}));
  EXPECT_EQ(p["layer1.ffn2.weight"].shape(), Shape({6, 7}));
  EXPECT_EQ(p["layer0.ln2.weight"].shape(), Shape({6}));
  EXPECT_EQ(p["s2t.w2.weight"].shape(), Shape({6, 6}));
  EXPECT_EQ(p.count("layer2.ln1.weight"), 0u);
  EncoderOutput o = enc->encode(random_input({2, 4, 5}, 27).detach(), length_mask({4, 2}, 4));
  EXPECT_EQ(o.tokens.shape(), Shape({2, 4, 6}));
  EXPECT_EQ(o.sentence.shape(), Shape({2, 6}));
  // Defaults: hidden 300, 10 heads of 30, one layer, ffn 1200.
  std::unique_ptr<Encoder> def = build_transformer_encoder(Config(), ctx);
  auto dp = params_of(*def);
  EXPECT_EQ(def->token_dim(), 300);
  EXPECT_EQ(dp["layer0.ffn1.weight"].shape(), Shape({1200, 300}));
  EXPECT_EQ(dp.count("layer1.ffn1.weight"), 0u);
}

TEST(Transformer, ConfigAndShapeErrors) {
  SeededEncoderContext ctx(5, 28, 29);
  auto build = [&](const std::string& text) { return build_transformer_encoder(Config::parse(text), ctx); };
  EXPECT_THAT(error_of([&] { build("hidden = 300\nheads = 7"); }),
              HasSubstr("hidden 300 must be a positive multiple of heads 7"));
  EXPECT_THAT(error_of([&] { build("layers = 0"); }),
              HasSubstr("key 'layers' of transformer must lie in 1..1000, got '0'"));
  EXPECT_THAT(error_of([&] { build("keep_prob = 1.5"); }),
              HasSubstr("key 'keep_prob' of transformer must lie in (0, 1], got '1.5'"));
  std::unique_ptr<Encoder> enc = build("hidden = 4\nheads = 2");
  EXPECT_THAT(error_of([&] { enc->encode(zeros({2, 3, 4}, DType::F64), length_mask({3, 3}, 3)); }),
              HasSubstr("expects x [B, n, 5], got [2, 3, 4]"));
  EXPECT_THAT(error_of([&] { enc->encode(zeros({2, 3, 5}, DType::F64), length_mask({3}, 3)); }),
              HasSubstr("mask must be uint8 [B, n] = [2, 3]"));
  Generator gen(30);
  EXPECT_THAT(error_of([&] { MultiHeadAttention(6, 4, gen); }), HasSubstr("features 6 must be a positive multiple"));
}

}  // namespace
}  // namespace attn
