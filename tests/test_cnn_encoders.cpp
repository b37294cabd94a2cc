// The CNN baselines (models/multicnn, models/hrchycnn): float64 end-to-end
// gradcheck over every parameter and the input with padding, an empty and a
// one-token sentence; padded positions change nothing; the token widths;
// Hrchy-CNN's first layer against its definition written with the op.
// NaN/Inf at padded positions and float32 extremes are checked for every
// registered encoder in tests/test_encoder_extremes.cpp.
#include <gtest/gtest.h>

#include "attn/models/hrchycnn.h"
#include "attn/models/multicnn.h"
#include "attn/ops/token_conv/token_conv.h"
#include "attn/ops/unary/unary.h"
#include "model_checks.h"
#include "seeded_encoder_context.h"

namespace attn {
namespace {

using testing_support::expect_gradcheck;
using testing_support::expect_padding_invariant;
using testing_support::flat_outputs;
using testing_support::SeededEncoderContext;
using testing_support::random_input;

TEST(MultiCnn, GradcheckAllParametersAndInputsWithPadding) {
  Generator gen(3);
  // The readout's act is elu: with relu, a token whose convolutions are all
  // negative (relu 0) or padded meets the readout's zero bias at relu's kink,
  // where central differences do not measure a derivative.
  MultiCnn model(3, 2, 2, 4, Activation::Elu, gen, DType::F64);
  EXPECT_EQ(model.token_dim(), 6);
  const Tensor x = random_input({3, 5, 3}, 11);
  const Tensor mask = length_mask({5, 1, 0}, 5);  // full, one token, empty
  expect_gradcheck(model, x, [&] { return flat_outputs(model.encode(x, mask)); });
}

TEST(MultiCnn, PaddedPositionsChangeNoValidOutput) {
  Generator gen(5);
  MultiCnn model(3, 4, 3, 5, Activation::Relu, gen, DType::F64);
  expect_padding_invariant(model, random_input({3, 6, 3}, 6), length_mask({6, 2, 0}, 6));
}

TEST(MultiCnn, TokensAreTheWidthsReluConvolutionsSideBySide) {
  Generator gen(9);
  MultiCnn model(3, 2, 3, 4, Activation::Relu, gen, DType::F64);
  const Tensor x = random_input({2, 4, 3}, 12).detach();
  const Tensor mask = length_mask({4, 3}, 4);
  const Tensor tokens = model.encode(x, mask).tokens;
  auto params = model.named_parameters();
  auto param = [&](const std::string& name) {
    for (auto& [n, p] : params)
      if (n == name) return p;
    ADD_FAILURE() << "no parameter " << name;
    return Tensor();
  };
  const Tensor y3 = relu(token_conv(x, mask, param("conv3.weight"), param("conv3.bias")));
  const Tensor y4 = relu(token_conv(x, mask, param("conv4.weight"), param("conv4.bias")));
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t t = 0; t < 4; ++t)
      for (int64_t o = 0; o < 2; ++o) {
        EXPECT_EQ(tokens.at({b, t, o}), y3.at({b, t, o}));  // the same kernels on the same inputs
        EXPECT_EQ(tokens.at({b, t, 2 + o}), y4.at({b, t, o}));
      }
}

TEST(HrchyCnn, GradcheckAllParametersAndInputsWithPadding) {
  Generator gen(4);
  // relu_before_gate off and an elu readout: a function without kinks (see
  // MultiCnn's gradcheck), so central differences measure it everywhere.
  HrchyCnn model(3, 4, 3, 3, false, Activation::Elu, gen, DType::F64);
  const Tensor x = random_input({3, 5, 3}, 13);
  const Tensor mask = length_mask({5, 1, 0}, 5);
  expect_gradcheck(model, x, [&] { return flat_outputs(model.encode(x, mask)); });
}

TEST(HrchyCnn, GradcheckWithTheReleasedCodesRelu) {
  Generator gen(6);
  HrchyCnn model(4, 4, 2, 5, true, Activation::Elu, gen, DType::F64);
  const Tensor x = random_input({2, 4, 4}, 14);
  expect_gradcheck(model, x, [&] { return flat_outputs(model.encode(x, length_mask({4, 3}, 4))); });
}

TEST(HrchyCnn, PaddedPositionsChangeNoValidOutput) {
  Generator gen(8);
  HrchyCnn model(3, 4, 3, 5, true, Activation::Relu, gen, DType::F64);
  expect_padding_invariant(model, random_input({3, 6, 3}, 7), length_mask({6, 1, 0}, 6));
}

TEST(HrchyCnn, OneLayerIsTheGatedLinearUnitOfTheConvolution) {
  Generator gen(10);
  HrchyCnn model(3, 2, 1, 5, true, Activation::Relu, gen, DType::F64);
  const Tensor x = random_input({1, 4, 3}, 15).detach();
  const Tensor mask = length_mask({3}, 4);
  const Tensor tokens = model.encode(x, mask).tokens;
  auto params = model.named_parameters();
  Tensor w, bias;
  for (auto& [n, p] : params) {
    if (n == "conv0.weight") w = p;
    if (n == "conv0.bias") bias = p;
  }
  ASSERT_TRUE(w.defined() && bias.defined());
  EXPECT_EQ(w.shape(), Shape({5, 3, 4}));
  const Tensor c = relu(token_conv(x, mask, w, bias));
  for (int64_t t = 0; t < 4; ++t)
    for (int64_t o = 0; o < 2; ++o) {
      const double want = c.at({0, t, o}) / (1.0 + std::exp(-c.at({0, t, 2 + o})));
      // One product and a logistic in double: a few ulp of values near 1.
      EXPECT_NEAR(tokens.at({0, t, o}), want, 1e-15) << "token " << t;
    }
}

TEST(CnnEncoders, RegisteredWithThePapersWidths) {
  SeededEncoderContext ctx(300, 1, 2, DType::F32);
  EXPECT_EQ(build_encoder(Config::parse("encoder = multicnn\n"), ctx)->token_dim(), 600);
  EXPECT_EQ(build_encoder(Config::parse("encoder = hrchycnn\n"), ctx)->sentence_dim(), 300);
  EXPECT_THROW(build_encoder(Config::parse("encoder = multicnn\nmin_width = 4\nmax_width = 3\n"), ctx), std::exception);
}

}  // namespace
}  // namespace attn
