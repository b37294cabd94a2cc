// The fused window attention (ops/window_attention/window_attention.h) against the composed
// form it replaced in models/multiscale.cpp (pad + narrow + stack + matmul +
// masked softmax, which gathers [B, h, n, 2R+1, d_h] keys and values): same
// output and q, k, v gradients in float64 and float32 with mixed radii and
// padding; its probabilities sum to 1 over the allowed keys and are exactly 0
// elsewhere; a query with no allowed key outputs 0 and passes no gradient;
// clear errors for bad operands.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "attn/engine/copy.h"
#include "attn/models/masks.h"
#include "attn/models/multiscale.h"
#include "attn/ops/binary/binary.h"
#include "attn/ops/join/join.h"
#include "attn/ops/matmul/matmul.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/ops/softmax/softmax.h"
#include "attn/ops/unary/unary.h"
#include "attn/ops/view/view.h"
#include "attn/ops/window_attention/window_attention.h"
#include "model_checks.h"
#include "test_util.h"

namespace attn {
namespace {

using namespace testing_support;

using ::testing::HasSubstr;

// The reference: the composed window attention the Multi-Scale Transformer
// ran before the fused op. The t-th shifted view of the padded keys holds key
// j - R + t at row j; stacked, they are [B, h, n, 2R+1, d_h].
Tensor window_attention_composed(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& valid,
                                 const std::vector<int64_t>& radii) {
  const int64_t n = q.size(2);
  const Tensor allowed = unsqueeze(window_band_mask(valid, radii), 1);  // [B, 1, n, 2R+1]
  const int64_t width = allowed.size(3), reach = (width - 1) / 2;
  Tensor kp = pad(k, 2, reach, reach), vp = pad(v, 2, reach, reach);
  std::vector<Tensor> ks, vs;
  for (int64_t t = 0; t < width; ++t) {
    ks.push_back(narrow(kp, 2, t, n));
    vs.push_back(narrow(vp, 2, t, n));
  }
  Tensor kw = stack(ks, 3), vw = stack(vs, 3);
  Tensor scores = squeeze(matmul(unsqueeze(q, 3), transpose(kw, -1, -2)), 3);  // [B, h, n, 2R+1]
  scores = mul_scalar(scores, 1.0 / std::sqrt(static_cast<double>(q.size(3))));
  Tensor p = softmax(scores, -1, allowed);
  return squeeze(matmul(unsqueeze(p, 3), vw), 3);
}



struct AttentionRun {
  Tensor out;
  std::vector<Tensor> grads;  // q, k, v
};

// out and the gradients of sum(out * weights), leaves cast to `dtype`.
template <class F>
AttentionRun run(const F& attention, const std::vector<Tensor>& leaves, const Tensor& weights, DType dtype) {
  std::vector<Tensor> in;
  for (const Tensor& t : leaves) in.push_back(cast(t.detach(), dtype).set_requires_grad(true));
  Tensor out = attention(in[0], in[1], in[2]);
  sum(out * cast(weights, dtype)).backward();
  AttentionRun r{cast(out.detach(), DType::F64), {}};
  for (const Tensor& t : in) r.grads.push_back(cast(t.grad(), DType::F64));
  return r;
}

// Mixed radii (1, a whole-sentence 20, 0, 3) over lengths with padding; the
// radius-0 example has padded queries whose only key is padding.
struct Problem {
  static constexpr int64_t B = 4, h = 2, n = 9, d = 5;
  std::vector<int64_t> radii{1, 20, 0, 3};
  Tensor valid = length_mask({9, 6, 4, 7}, n);
  std::vector<Tensor> leaves{mul_scalar(random_input({B, h, n, d}, 1), 2.0), mul_scalar(random_input({B, h, n, d}, 2), 2.0),
                             random_input({B, h, n, d}, 3)};
  Tensor weights = random_input({B, h, n, d}, 4).detach();
  int64_t width() const { return 2 * (n - 1) + 1; }  // radius 20 is capped at n - 1
};

// Rounding error bound: every output and gradient entry is a sum of at most
// W d + W + d terms (scores of d products, a softmax over W keys, a W-term
// mix, and their transposes in the backward), each carrying a few roundings
// (product, exp, division): 8 u per term, relative to the largest entry.
double tolerance(double unit_roundoff, int64_t W, int64_t d, const Tensor& reference) {
  return 8 * unit_roundoff * static_cast<double>(W * d + W + d) * std::max(1.0, max_abs(reference));
}

void expect_matches(const AttentionRun& got, const AttentionRun& want, double unit_roundoff, int64_t W, int64_t d,
                    const std::string& what) {
  EXPECT_LT(max_abs_diff(got.out, want.out), tolerance(unit_roundoff, W, d, want.out)) << what << " out";
  EXPECT_GT(max_abs(want.out), 0.1) << what;
  const char* names[] = {"q", "k", "v"};
  for (size_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(got.grads[i].defined()) << what << " grad " << names[i];
    EXPECT_LT(max_abs_diff(got.grads[i], want.grads[i]), tolerance(unit_roundoff, W, d, want.grads[i]))
        << what << " grad " << names[i];
    EXPECT_GT(max_abs(want.grads[i]), 1e-2) << what << " grad " << names[i];
  }
}

TEST(WindowAttentionFused, MatchesTheComposedFormInFloat64) {
  Problem p;
  auto fused = [&](const Tensor& q, const Tensor& k, const Tensor& v) { return window_attention(q, k, v, p.valid, p.radii); };
  auto composed = [&](const Tensor& q, const Tensor& k, const Tensor& v) {
    return window_attention_composed(q, k, v, p.valid, p.radii);
  };
  expect_matches(run(fused, p.leaves, p.weights, DType::F64), run(composed, p.leaves, p.weights, DType::F64),
                 std::numeric_limits<double>::epsilon() / 2, p.width(), Problem::d, "float64");
}

// float32 against the float64 composed reference: the float32 rounding bound.
TEST(WindowAttentionFused, Float32MatchesTheFloat64Reference) {
  Problem p;
  auto fused = [&](const Tensor& q, const Tensor& k, const Tensor& v) { return window_attention(q, k, v, p.valid, p.radii); };
  auto composed = [&](const Tensor& q, const Tensor& k, const Tensor& v) {
    return window_attention_composed(q, k, v, p.valid, p.radii);
  };
  const AttentionRun got = run(fused, p.leaves, p.weights, DType::F32);
  expect_matches(got, run(composed, p.leaves, p.weights, DType::F64), std::numeric_limits<float>::epsilon() / 2,
                 p.width(), Problem::d, "float32");
}

// What `attn explain` draws: the probabilities of each query sum to 1 over its
// allowed keys and are exactly 0 elsewhere; a query with no allowed key has an
// all-zero row, outputs 0 and passes no gradient; nothing is NaN.
TEST(WindowAttentionFused, ProbabilitiesAndEmptyRows) {
  Problem p;
  const Tensor allowed = window_band_mask(p.valid, p.radii);
  ASSERT_EQ(allowed.shape(), Shape({Problem::B, Problem::n, p.width()}));
  Tensor q = p.leaves[0].detach().set_requires_grad(true), k = p.leaves[1].detach().set_requires_grad(true);
  Tensor v = p.leaves[2].detach().set_requires_grad(true);
  WindowAttention a = fused_window_attention(q, k, v, allowed, 0.5);
  sum(a.out * p.weights).backward();
  ASSERT_EQ(a.probabilities.shape(), Shape({Problem::B, Problem::h, Problem::n, p.width()}));
  int64_t empty_rows = 0;
  for (int64_t b = 0; b < Problem::B; ++b)
    for (int64_t c = 0; c < Problem::h; ++c)
      for (int64_t j = 0; j < Problem::n; ++j) {
        double total = 0;
        int64_t allowed_keys = 0;
        for (int64_t t = 0; t < p.width(); ++t) {
          const double w = a.probabilities.at({b, c, j, t});
          EXPECT_TRUE(std::isfinite(w));
          if (allowed.at({b, j, t}) != 0) {
            total += w;
            ++allowed_keys;
          } else {
            EXPECT_EQ(w, 0.0) << b << " " << c << " " << j << " " << t;
          }
        }
        if (allowed_keys > 0) {
          EXPECT_NEAR(total, 1.0, 1e-14);
          continue;
        }
        ++empty_rows;
        EXPECT_EQ(total, 0.0);
        for (int64_t l = 0; l < Problem::d; ++l) {
          EXPECT_EQ(a.out.at({b, c, j, l}), 0.0);
          EXPECT_EQ(q.grad().at({b, c, j, l}), 0.0);
        }
      }
  EXPECT_EQ(empty_rows, Problem::h * 5) << "example 2 (radius 0, length 4) has 5 padded queries";
  for (const Tensor* t : {&q, &k, &v})
    for (double g : t->grad().to_vector()) EXPECT_TRUE(std::isfinite(g));
}

// Scores far beyond exp's range: each row is shifted by its own maximum over
// the allowed keys only, so nothing overflows.
TEST(WindowAttentionFused, HugeScoresStayFinite) {
  Tensor q = mul_scalar(random_input({1, 1, 6, 3}, 11), 1e3).detach();
  Tensor k = mul_scalar(random_input({1, 1, 6, 3}, 12), 1e3).detach();
  Tensor v = random_input({1, 1, 6, 3}, 13).detach();
  WindowAttention a = fused_window_attention(q, k, v, window_band_mask(length_mask({5}, 6), {2}), 1.0);
  for (double x : a.out.to_vector()) EXPECT_TRUE(std::isfinite(x));
  for (double x : a.probabilities.to_vector()) EXPECT_TRUE(std::isfinite(x));
}

// Heads of several window sizes in one call (a band per head, the
// Multi-Scale Transformer's layout: split_heads views in, heads out in
// [B, n, h, d] order) give what one call per group of heads with a shared
// band gives, in the output and in every gradient, in both dtypes.
TEST(WindowAttentionFused, PerHeadBandsMatchOneCallPerGroup) {
  const int64_t B = 3, n = 9, h = 3, d = 4;
  const Tensor valid = length_mask({9, 6, 1}, n);
  const std::vector<std::vector<int64_t>> radii{{0, 0, 0}, {1, 2, 1}, {4, 3, 8}};
  for (DType dt : {DType::F64, DType::F32}) {
    std::vector<Tensor> leaves;
    for (uint64_t i = 0; i < 3; ++i)
      leaves.push_back(cast(random_input({B, n, h * d}, 40 + i), dt).detach().set_requires_grad(true));
    const Tensor weights = cast(random_input({B, h, n, d}, 44), dt).detach();
    auto heads_of = [&](const Tensor& x) { return transpose(reshape(x, {B, n, h, d}), 1, 2); };
    std::vector<Tensor> outs, grads;
    for (bool one_call : {true, false}) {
      for (const Tensor& t : leaves) t.zero_grad();
      const Tensor q = heads_of(leaves[0]), k = heads_of(leaves[1]), v = heads_of(leaves[2]);
      Tensor out;
      if (one_call) {
        out = fused_window_attention(q, k, v, window_band_mask_per_head(valid, radii), 0.5).out;
        EXPECT_EQ(out.strides(), std::vector<int64_t>({n * h * d, d, h * d, 1})) << "heads in [B, n, h, d] order";
      } else {
        std::vector<Tensor> per_head;
        for (int64_t c = 0; c < h; ++c)
          per_head.push_back(fused_window_attention(narrow(q, 1, c, 1), narrow(k, 1, c, 1), narrow(v, 1, c, 1),
                                                    window_band_mask(valid, radii[static_cast<size_t>(c)]), 0.5)
                                 .out);
        out = concat(per_head, 1);
      }
      sum(out * weights).backward();
      outs.push_back(out.detach());
      for (const Tensor& t : leaves) grads.push_back(t.grad());
    }
    const double bound = dt == DType::F64 ? 1e-12 : 1e-5;
    EXPECT_LT(max_abs_diff(outs[0], outs[1]), bound) << dtype_name(dt);
    EXPECT_GT(max_abs(outs[0]), 0.1) << dtype_name(dt);
    for (size_t i = 0; i < 3; ++i) {
      EXPECT_LT(max_abs_diff(grads[i], grads[3 + i]), bound) << dtype_name(dt) << " operand " << i;
      EXPECT_GT(max_abs(grads[i]), 1e-3) << dtype_name(dt) << " operand " << i;
    }
  }
}

// Head c's band in the per-head mask is its own window_band_mask, centred in
// the wider band of the widest radius.
TEST(WindowAttentionFused, PerHeadMaskCentresEachHeadsBand) {
  const Tensor valid = length_mask({7, 4}, 7);
  const std::vector<std::vector<int64_t>> radii{{1, 0}, {3, 2}};
  const Tensor all = window_band_mask_per_head(valid, radii);
  ASSERT_EQ(all.shape(), Shape({2, 2, 7, 7}));
  for (int64_t c = 0; c < 2; ++c) {
    const Tensor own = window_band_mask(valid, radii[static_cast<size_t>(c)]);
    const int64_t r = (own.size(2) - 1) / 2;
    EXPECT_EQ(cast(squeeze(narrow(narrow(all, 1, c, 1), 3, 3 - r, 2 * r + 1), 1), DType::F64).to_vector(),
              cast(own, DType::F64).to_vector())
        << "head " << c;
  }
  EXPECT_THAT(error_of([&] {
                window_band_mask_per_head(valid, {{1, 1}, {2}});
              }),
              HasSubstr("needs one radius per example (2), got 1"));
}

TEST(WindowAttentionFused, BadOperandsNameTheProblem) {
  Tensor q = random_input({2, 1, 4, 3}, 21);
  Tensor band = window_band_mask(length_mask({4, 2}, 4), {1, 1});
  EXPECT_THAT(error_of([&] {
                fused_window_attention(q, random_input({2, 1, 4, 2}, 22), q, band, 1.0);
              }),
              HasSubstr("k must have q's shape [2, 1, 4, 3], got [2, 1, 4, 2]"));
  EXPECT_THAT(error_of([&] { fused_window_attention(q, q, q, ones({2, 4, 2}, DType::U8), 1.0); }), HasSubstr("odd W"));
  EXPECT_THAT(error_of([&] {
                fused_window_attention(q, q, q, ones({2, 4, 3}, DType::F64), 1.0);
              }),
              HasSubstr("uint8 band mask [B, n, W]"));
  EXPECT_THAT(error_of([&] {
                fused_window_attention(q, q, q, ones({2, 3, 4, 3}, DType::U8), 1.0);
              }),
              HasSubstr("allowed must be [B, h, n, W] = [2, 1, 4, odd W]"));
  EXPECT_THAT(error_of([&] {
                fused_window_attention(random_input({2, 4, 3}, 23), q, q, band, 1.0);
              }),
              HasSubstr("q must be [B, h, n, d]"));
  EXPECT_THAT(error_of([&] { fused_window_attention(q, q, q, band, std::nan("")); }),
              HasSubstr("scale must be finite"));
  EXPECT_THAT(error_of([&] {
                window_band_mask(length_mask({4, 2}, 4), {1});
              }),
              HasSubstr("needs one radius per example (2), got 1"));
}

}  // namespace
}  // namespace attn
