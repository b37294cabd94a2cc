// The fused multi-dimensional attention (ops/multi_dim_attention/multi_dim_attention.h) against
// the composed form that builds the [B, n, n, d] scores: same outputs and
// gradients for the op alone and for every encoder that uses it (DiSAN,
// Bi-BloSAN, ReSAN), float32 against float64, no score tensor in its peak
// memory, and clear errors for bad operands.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "attn/engine/allocator.h"
#include "attn/engine/copy.h"
#include "attn/models/disa.h"
#include "attn/models/encoder.h"
#include "attn/models/masks.h"
#include "attn/ops/binary/binary.h"
#include "attn/ops/multi_dim_attention/multi_dim_attention.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/ops/registry.h"
#include "attn/ops/unary/unary.h"
#include "attn/ops/view/view.h"
#include "model_checks.h"
#include "test_util.h"

namespace attn {
namespace {

using namespace testing_support;


struct AttentionRun {
  Tensor out;
  std::vector<Tensor> grads;  // h, query term, key term, bias
};

// s = multi_dim_masked_attention(...) and the gradients of sum(s * weights).
AttentionRun run_attention(bool materialize, const std::vector<Tensor>& leaves, const Tensor& mask,
                           const Tensor& weights) {
  for (const Tensor& t : leaves) t.zero_grad();
  Tensor s = multi_dim_masked_attention(leaves[0], leaves[1], leaves[2], leaves[3], mask, 5.0, materialize);
  sum(s * weights).backward();
  AttentionRun r{s.detach(), {}};
  for (const Tensor& t : leaves) r.grads.push_back(t.grad());
  return r;
}

TEST(MultiDimAttention, FusedMatchesTheMaterialisedScoresWithPaddingAndDirections) {
  const int64_t B = 3, n = 6, d = 70;        // a batch this small splits d into CPU feature blocks
  Tensor valid = length_mask({6, 4, 0}, n);  // the third sequence is empty
  for (Direction dir : {Direction::Forward, Direction::Backward, Direction::None}) {
    Tensor mask = pair_mask(valid, direction_mask(n, dir));
    std::vector<Tensor> leaves{random_input({B, n, d}, 1), random_input({B, n, d}, 2), random_input({B, n, d}, 3),
                               random_input({d}, 4)};
    Tensor weights = random_input({B, n, d}, 5).detach();
    AttentionRun fused = run_attention(false, leaves, mask, weights);
    AttentionRun reference = run_attention(true, leaves, mask, weights);
    EXPECT_LT(max_abs_diff(fused.out, reference.out), 1e-12) << direction_name(dir);
    EXPECT_GT(max_abs(fused.out), 0.1) << direction_name(dir);
    for (size_t k = 0; k < leaves.size(); ++k) {
      ASSERT_TRUE(fused.grads[k].defined()) << "leaf " << k;
      EXPECT_LT(max_abs_diff(fused.grads[k], reference.grads[k]), 1e-11) << direction_name(dir) << " leaf " << k;
      EXPECT_GT(max_abs(fused.grads[k]), 1e-3) << direction_name(dir) << " leaf " << k;
    }
  }
}

// The CPU kernel computes e^a as e^(2q/c) e^(2k/c) where every |2q/c| and
// |2k/c| of a (batch, feature block) task is at most 40, and exactly
// otherwise. Batch 0 here has |q| up to 150 (2q/c up to 60 at c = 5) with
// k = -q + noise, so its diagonal pairs are not saturated; batch 1 is in
// range. Both paths must match the materialised scores in one call.
TEST(MultiDimAttention, OperandsOutsideTheFactorRangeMatchTheMaterialisedScores) {
  const int64_t B = 2, n = 5, d = 70;
  Tensor scale = from_vector({150.0, 1.0}, {B, 1, 1}, DType::F64);
  Tensor q = mul(random_input({B, n, d}, 31), scale).detach();
  Tensor k = add(mul(q, from_vector({-1.0, 0.0}, {B, 1, 1}, DType::F64)), random_input({B, n, d}, 32)).detach();
  EXPECT_GT(max_abs(q), 100.0);  // 2q/c > 40: batch 0 leaves the factored form
  std::vector<Tensor> leaves{random_input({B, n, d}, 33), q.set_requires_grad(true), k.set_requires_grad(true),
                             random_input({d}, 34)};
  Tensor mask = pair_mask(length_mask({5, 5}, n), direction_mask(n, Direction::None));
  Tensor weights = random_input({B, n, d}, 35).detach();
  AttentionRun fused = run_attention(false, leaves, mask, weights);
  AttentionRun reference = run_attention(true, leaves, mask, weights);
  EXPECT_LT(max_abs_diff(fused.out, reference.out), 1e-12);
  for (size_t i = 0; i < leaves.size(); ++i) {
    EXPECT_LT(max_abs_diff(fused.grads[i], reference.grads[i]), 1e-11) << "leaf " << i;
    EXPECT_GT(max_abs(fused.grads[i]), 1e-3) << "leaf " << i;
  }
}

TEST(MultiDimAttention, Float32MatchesFloat64) {
  const int64_t B = 2, nq = 5, nk = 7, d = 33;
  Tensor q = random_input({B, nq, d}, 11).detach(), k = random_input({B, nk, d}, 12).detach();
  Tensor v = random_input({B, nk, d}, 13).detach();
  Tensor mask = ones({B, nq, nk}, DType::U8);
  Tensor ref = multi_dim_attention(q, k, v, mask, 5.0);
  Tensor got = multi_dim_attention(cast(q, DType::F32), cast(k, DType::F32), cast(v, DType::F32), mask, 5.0);
  EXPECT_EQ(got.dtype(), DType::F32);
  EXPECT_LT(max_abs_diff(got, ref), 1e-6);
}

// The float32 kernels (vector_math's exp and tanh in SIMD clones) must track
// float64 in the forward and the backward, for a moderate and a large c.
// Values and gradients are sums over nk keys of terms of the output's scale
// (at least 1: dq cancels O(1) terms), each a few float32 roundings off:
// the bound is 8 roundings per key at that scale. Rows of 7 tokens take the
// exact form at c = 5 (few pairs per operand row) and the factored one at
// c = 50; batch 0's rows of 24 the factored one at both.
class MultiDimAttentionRows : public ::testing::TestWithParam<int64_t> {};

TEST_P(MultiDimAttentionRows, Float32GradientsMatchFloat64) {
  const int64_t B = 2, nq = GetParam(), nk = GetParam(), d = 70;
  for (double c : {5.0, 50.0}) {
    Tensor q = random_input({B, nq, d}, 14).detach(), k = random_input({B, nk, d}, 15).detach();
    Tensor v = random_input({B, nk, d}, 16).detach();
    Tensor mask = where(unsqueeze(length_mask({nk, 4}, nk), 1), unsqueeze(direction_mask(nk, Direction::Forward), 0),
                        zeros({}, DType::U8));
    Tensor gout = random_input({B, nq, d}, 17).detach();
    auto grads_of = [&](DType dt) {
      std::vector<Tensor> leaves;
      for (const Tensor& t : {q, k, v}) leaves.push_back(cast(t, dt).detach().set_requires_grad(true));
      Tensor out = multi_dim_attention(leaves[0], leaves[1], leaves[2], mask, c);
      sum(out * cast(gout, dt)).backward();
      std::vector<Tensor> r{out};
      for (const Tensor& l : leaves) r.push_back(l.grad());
      return r;
    };
    std::vector<Tensor> ref = grads_of(DType::F64), got = grads_of(DType::F32);
    for (size_t i = 0; i < ref.size(); ++i) {
      const double bound = 8 * nk * std::ldexp(1.0, -24) * std::max(1.0, max_abs(ref[i]));
      EXPECT_LT(max_abs_diff(cast(got[i], DType::F64), ref[i]), bound) << "c " << c << " tensor " << i;
      EXPECT_GT(max_abs(ref[i]), 1e-4) << "c " << c << " tensor " << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(ShortAndLongRows, MultiDimAttentionRows, ::testing::Values(7, 24));

// A query without valid keys outputs exactly zero and passes no gradient,
// and no NaN appears anywhere, even with huge inputs (tanh saturates).
TEST(MultiDimAttention, EmptyRowsAndHugeInputsStayFinite) {
  Tensor q = mul_scalar(random_input({1, 3, 4}, 21), 1e6).detach().set_requires_grad(true);
  Tensor k = mul_scalar(random_input({1, 3, 4}, 22), 1e6).detach().set_requires_grad(true);
  Tensor v = random_input({1, 3, 4}, 23);
  Tensor mask = samples::u8_mask({1, 1, 0, 0, 0, 0, 1, 1, 1}, {1, 3, 3});
  Tensor out = multi_dim_attention(q, k, v, mask, 5.0);
  sum(out).backward();
  for (double x : out.to_vector()) EXPECT_TRUE(std::isfinite(x));
  for (int64_t f = 0; f < 4; ++f) EXPECT_EQ(out.at({0, 1, f}), 0.0);
  for (const Tensor* t : {&q, &k, &v})
    for (double g : t->grad().to_vector()) EXPECT_TRUE(std::isfinite(g));
}

// The fused op never allocates a [B, n, n, d] tensor: its forward + backward
// peak stays below the size of one score tensor, which the composed form
// needs several of.
TEST(MultiDimAttention, PeakMemoryHasNoScoreTensor) {
  const int64_t B = 2, n = 48, d = 32;
  const int64_t score_bytes = B * n * n * d * 8;
  Tensor mask = pair_mask(length_mask({n, n}, n), direction_mask(n, Direction::Forward));
  std::vector<Tensor> leaves{random_input({B, n, d}, 31), random_input({B, n, d}, 32), random_input({B, n, d}, 33),
                             random_input({d}, 34)};
  Tensor weights = random_input({B, n, d}, 35).detach();
  Allocator& cpu = allocator_for(Device::CPU);
  int64_t peak[2];
  for (bool materialize : {false, true}) {
    const int64_t before = cpu.stats().current_bytes;
    cpu.reset_peak();
    run_attention(materialize, leaves, mask, weights);
    peak[materialize] = cpu.stats().peak_bytes - before;
  }
  EXPECT_LT(peak[0], score_bytes) << "fused peak " << peak[0] << " bytes";
  EXPECT_GT(peak[1], 2 * score_bytes) << "materialised peak " << peak[1] << " bytes";
}

// Every encoder built on the op gives the same outputs and parameter
// gradients with materialize_scores on and off.
TEST(MultiDimAttention, EncodersMatchWithAndWithoutMaterialisedScores) {
  for (std::string name : {"disan", "biblosan", "resan"}) {
    Tensor x = random_input({2, 7, 5}, 41).detach();
    Tensor valid = length_mask({7, 4}, 7);
    std::vector<Tensor> sentences, grads;
    for (bool materialize : {false, true}) {
      Generator init(42), noise(43);
      Config config = Config::parse("encoder = " + name +
                                    "\nhidden = 6\nmaterialize_scores = " + (materialize ? "true" : "false") + "\n");
      EncoderContext ctx{5, DType::F64, &init, &noise};
      std::unique_ptr<Encoder> encoder = build_encoder(config, ctx);
      EncoderOutput o = encoder->encode(x, valid);
      (sum(o.tokens) + sum(o.sentence)).backward();
      sentences.push_back(o.sentence.detach());
      for (const Tensor& p : encoder->parameters())
        grads.push_back(p.grad().defined() ? p.grad() : zeros(p.shape(), p.dtype()));
    }
    EXPECT_LT(max_abs_diff(sentences[0], sentences[1]), 1e-12) << name;
    const size_t half = grads.size() / 2;
    double largest = 0;
    for (size_t i = 0; i < half; ++i) {
      EXPECT_LT(max_abs_diff(grads[i], grads[half + i]), 1e-10) << name << " parameter " << i;
      largest = std::max(largest, max_abs(grads[i]));
    }
    EXPECT_GT(largest, 1e-3) << name;
  }
}

// A NaN key entry reaches exactly the outputs that attend to it: the query
// rows whose mask allows that key, in that feature. Rows that may not see
// it, and the other features, stay finite, and so do the gradients of the
// query rows that never meet it (the kernels clamp the exponent's argument
// and must select the NaN back in).
TEST(MultiDimAttention, ANanKeyReachesOnlyTheOutputsThatAttendToIt) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // Query 0 sees key 0; query 1 sees keys 0 and 1; query 2 sees keys 0 and 2.
  Tensor mask = samples::u8_mask({1, 0, 0, 1, 1, 0, 1, 0, 1}, {1, 3, 3});
  std::vector<double> keys(12);
  for (size_t i = 0; i < keys.size(); ++i) keys[i] = 0.3 * static_cast<double>(i % 5) - 0.6;
  keys[1 * 4 + 2] = nan;  // key 1, feature 2
  for (DType dt : {DType::F32, DType::F64}) {
    Tensor q = cast(random_input({1, 3, 4}, 61), dt).detach().set_requires_grad(true);
    Tensor k = from_vector(keys, {1, 3, 4}, dt).set_requires_grad(true);
    Tensor v = cast(random_input({1, 3, 4}, 62), dt).detach();
    Tensor out = multi_dim_attention(q, k, v, mask, 5.0);
    sum(out).backward();
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t f = 0; f < 4; ++f) {
        const bool sees_nan = i == 1 && f == 2;
        EXPECT_EQ(std::isnan(out.at({0, i, f})), sees_nan) << dtype_name(dt) << " query " << i << " feature " << f;
        if (i != 1) {
          EXPECT_TRUE(std::isfinite(q.grad().at({0, i, f}))) << dtype_name(dt) << " query " << i;
        }
      }
    EXPECT_TRUE(std::isnan(q.grad().at({0, 1, 2}))) << dtype_name(dt);
  }
}

TEST(MultiDimAttention, BadOperandsNameTheProblem) {
  Tensor q = random_input({2, 3, 4}, 51), k = random_input({2, 5, 4}, 52), v = random_input({2, 5, 4}, 53);
  Tensor mask = ones({2, 3, 5}, DType::U8);
  EXPECT_NE(error_of([&] {
              multi_dim_attention(q, k, random_input({2, 5, 3}, 54), mask, 5.0);
            }).find("values of shape [2, 5, 3] must have key's shape [2, 5, 4]"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              multi_dim_attention(q, random_input({2, 5, 3}, 55), v, mask, 5.0);
            }).find("key of shape"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              multi_dim_attention(q, k, v, ones({2, 5, 3}, DType::U8), 5.0);
            }).find("does not broadcast to [B, nq, nk] = [2, 3, 5]"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              multi_dim_attention(q, k, v, ones({2, 3, 5}, DType::F64), 5.0);
            }).find("uint8"),
            std::string::npos);
  EXPECT_NE(error_of([&] { multi_dim_attention(q, k, v, mask, 0.0); }).find("scale c must be positive"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              multi_dim_attention(random_input({3, 4}, 56), k, v, mask, 5.0);
            }).find("[B, n, d]"),
            std::string::npos);
}

}  // namespace
}  // namespace attn
