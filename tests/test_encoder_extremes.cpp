// Every registered encoder, in float32, against inputs a user can produce:
// NaN and Inf planted at padded positions must not change anything (padding is
// selected out, never multiplied by zero), and inputs large enough to push
// attention scores far past float32's exp range, with single-token and empty
// sentences in the batch, must give finite outputs and finite gradients.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "attn/engine/random.h"
#include "attn/models/encoder.h"
#include "attn/models/masks.h"
#include "attn/ops/binary/binary.h"
#include "attn/engine/copy.h"
#include "attn/ops/reduce/reduce.h"

namespace attn {
namespace {

constexpr int64_t kInputDim = 12;

std::unique_ptr<Encoder> build(const std::string& name, Generator& init, Generator& noise) {
  EncoderContext ctx;
  ctx.input_dim = kInputDim;
  ctx.dtype = DType::F32;
  ctx.init = &init;
  ctx.noise = &noise;
  std::unique_ptr<Encoder> encoder = build_encoder(Config::parse("encoder = " + name + "\n"), ctx);
  encoder->set_training(false);  // no dropout or sampling: one function per input
  return encoder;
}

struct Result {
  std::vector<double> tokens, sentence;
  std::vector<std::pair<std::string, std::vector<double>>> grads;  // every parameter with a gradient
};

// Forward, then backward of a fixed weighting of every output element.
Result run(Encoder& encoder, const Tensor& input, const Tensor& mask) {
  for (const Tensor& p : encoder.parameters()) p.zero_grad();
  Tensor x = input.detach().set_requires_grad(true);
  EncoderOutput out = encoder.encode(x, mask);
  Generator w(77);
  Tensor loss = sum(out.tokens * rand_uniform(out.tokens.shape(), -1, 1, w, out.tokens.dtype())) +
                sum(out.sentence * rand_uniform(out.sentence.shape(), -1, 1, w, out.sentence.dtype()));
  loss.backward();
  Result r{out.tokens.to_vector(), out.sentence.to_vector(), {}};
  for (auto& [name, p] : encoder.named_parameters())
    if (p.grad().defined()) r.grads.emplace_back(name, p.grad().to_vector());
  r.grads.emplace_back("input", x.grad().to_vector());
  return r;
}

std::string first_non_finite(const std::vector<double>& v, const std::string& what) {
  for (size_t i = 0; i < v.size(); ++i)
    if (!std::isfinite(v[i])) return what + "[" + std::to_string(i) + "] = " + std::to_string(v[i]);
  return "";
}

class EncoderExtremes : public ::testing::TestWithParam<std::string> {};

// lengths [4, 2] as in the report: example 1's positions 2 and 3 are padding.
TEST_P(EncoderExtremes, NanAndInfAtPaddedPositionsChangeNothing) {
  Generator init(1), noise(2), data(3);
  std::unique_ptr<Encoder> encoder = build(GetParam(), init, noise);
  const int64_t n = 4;
  Tensor clean = rand_uniform({2, n, kInputDim}, -1, 1, data, DType::F32);
  Tensor mask = length_mask({4, 2}, n);
  Result want = run(*encoder, clean, mask);

  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  for (double planted : {nan, inf, -inf}) {
    Tensor dirty = clone(clean);
    for (int64_t f = 0; f < kInputDim; ++f) {
      write_element(dirty, (1 * n + 2) * kInputDim + f, f == 0 ? planted : 1e30);
      write_element(dirty, (1 * n + 3) * kInputDim + f, planted);
    }
    Result got = run(*encoder, dirty, mask);
    const std::string what = GetParam() + " with " + std::to_string(planted) + " planted";
    ASSERT_EQ(first_non_finite(got.tokens, "tokens"), "") << what;
    ASSERT_EQ(first_non_finite(got.sentence, "sentence"), "") << what;
    // Padding is selected out before the mechanism reads it, so the very same
    // kernels see the very same values: the results are identical.
    EXPECT_EQ(got.tokens, want.tokens) << what;
    EXPECT_EQ(got.sentence, want.sentence) << what;
    ASSERT_EQ(got.grads.size(), want.grads.size()) << what;
    for (size_t i = 0; i < want.grads.size(); ++i) {
      ASSERT_EQ(first_non_finite(got.grads[i].second, "grad " + got.grads[i].first), "") << what;
      EXPECT_EQ(got.grads[i].second, want.grads[i].second) << what << ": grad of " << want.grads[i].first;
    }
  }
}

TEST_P(EncoderExtremes, FiniteForHugeInputsAndEmptyOrSingleTokenSentences) {
  Generator init(4), noise(5), data(6);
  std::unique_ptr<Encoder> encoder = build(GetParam(), init, noise);
  const int64_t n = 24;
  Tensor mask = length_mask({n, 1, 0, 13}, n);
  for (double scale : {1.0, 1e2, 1e4}) {
    Tensor x = rand_uniform({4, n, kInputDim}, -scale, scale, data, DType::F32);
    Result r = run(*encoder, x, mask);
    const std::string what = GetParam() + " at input scale " + std::to_string(scale);
    ASSERT_EQ(first_non_finite(r.tokens, "tokens"), "") << what;
    ASSERT_EQ(first_non_finite(r.sentence, "sentence"), "") << what;
    double largest = 0;
    for (const auto& [name, g] : r.grads) {
      ASSERT_EQ(first_non_finite(g, "grad " + name), "") << what;
      for (double v : g) largest = std::max(largest, std::abs(v));
    }
    EXPECT_GT(largest, 0.0) << what << ": every gradient is zero";
    // The empty sentence (example 2) has no token output.
    const size_t width = r.tokens.size() / (4 * n);
    for (size_t i = 2 * n * width; i < 3 * n * width; ++i) ASSERT_EQ(r.tokens[i], 0.0) << what;
  }
}

INSTANTIATE_TEST_SUITE_P(Registry, EncoderExtremes, ::testing::ValuesIn(encoder_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace attn
