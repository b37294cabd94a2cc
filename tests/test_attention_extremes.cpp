// Attention mechanisms under extreme but finite scores, in float32: logit
// spreads far past float32's exp range (about 88), long sequences, single-token
// and empty sentences, every mask kind. Outputs and gradients must be finite,
// and where an exact reference exists (MTSA's Eqs. 10-12 evaluated per
// (query, feature) in float64), equal to it within float32 rounding.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "attn/engine/autograd.h"
#include "attn/engine/random.h"
#include "attn/models/masks.h"
#include "attn/models/mtsa_attention.h"
#include "attn/ops/binary/binary.h"
#include "attn/engine/copy.h"
#include "attn/ops/matmul/matmul.h"
#include "attn/ops/multi_dim_attention/multi_dim_attention.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/ops/separable_attention/separable_attention.h"
#include "attn/ops/softmax/softmax.h"
#include "attn/ops/unary/unary.h"
#include "attn/ops/view/view.h"
#include "test_util.h"

namespace attn {
namespace {

using namespace testing_support;

// Every element finite; otherwise the first offending index.
std::string first_non_finite(const Tensor& t, const std::string& what) {
  if (!t.defined()) return what + " is undefined";
  std::vector<double> v = t.to_vector();
  for (size_t i = 0; i < v.size(); ++i)
    if (!std::isfinite(v[i])) return what + "[" + std::to_string(i) + "] = " + std::to_string(v[i]);
  return "";
}


Tensor leaf(const Tensor& t) { return t.detach().set_requires_grad(true); }

// A fixed projection of the output to a scalar, so each output element gets
// its own upstream gradient.
Tensor weighted_sum(const Tensor& y, uint64_t seed) {
  Generator gen(seed);
  return sum(y * rand_uniform(y.shape(), -1, 1, gen, y.dtype()));
}

// ----------------------------------------------------------------- MTSA

struct MtsaInputs {
  Tensor q, k, v, s, positional, valid;
};

MtsaInputs mtsa_inputs(int64_t b, int64_t h, int64_t n, int64_t d, const std::vector<int64_t>& lengths,
                       HeadMask mask, uint64_t seed, double qk_range, double s_range) {
  Generator gen(seed);
  MtsaInputs in;
  in.q = rand_uniform({b, h, n, d}, -qk_range, qk_range, gen, DType::F64);
  in.k = rand_uniform({b, h, n, d}, -qk_range, qk_range, gen, DType::F64);
  in.v = rand_uniform({b, h, n, d}, -1, 1, gen, DType::F64);
  in.s = rand_uniform({b, h, n, d}, -s_range, s_range, gen, DType::F64);
  in.positional = head_mask_tensor(std::vector<HeadMask>(static_cast<size_t>(h), mask), n, 2);
  in.valid = length_mask(lengths, n);
  return in;
}

// H[b,c,j,l] = sum_i softmax_i(sigma_t(R_ji) + S_il) v_il over the allowed
// keys, each (query, feature) shifted by its own maximum: Eqs. 10-12 directly.
std::vector<double> mtsa_reference(const MtsaInputs& in, SigmaT sigma_t) {
  const int64_t B = in.q.size(0), H = in.q.size(1), n = in.q.size(2), d = in.q.size(3);
  std::vector<double> out(static_cast<size_t>(B * H * n * d), 0.0);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t c = 0; c < H; ++c)
      for (int64_t j = 0; j < n; ++j) {
        if (in.valid.at({b, j}) == 0) continue;
        std::vector<int64_t> keys;
        std::vector<double> a;
        for (int64_t i = 0; i < n; ++i) {
          if (in.valid.at({b, i}) == 0 || in.positional.at({c, j, i}) == 0) continue;
          double r = 0;
          for (int64_t l = 0; l < d; ++l) r += in.q.at({b, c, j, l}) * in.k.at({b, c, i, l});
          r /= std::sqrt(static_cast<double>(d));
          keys.push_back(i);
          a.push_back(sigma_t == SigmaT::Identity ? r : r < 0 ? r - std::log1p(std::exp(r)) : -std::log1p(std::exp(-r)));
        }
        if (keys.empty()) continue;
        for (int64_t l = 0; l < d; ++l) {
          double m = -std::numeric_limits<double>::infinity();
          for (size_t t = 0; t < keys.size(); ++t) m = std::max(m, a[t] + in.s.at({b, c, keys[t], l}));
          double z = 0, acc = 0;
          for (size_t t = 0; t < keys.size(); ++t) {
            const double e = std::exp(a[t] + in.s.at({b, c, keys[t], l}) - m);
            z += e;
            acc += e * in.v.at({b, c, keys[t], l});
          }
          out[static_cast<size_t>(((b * H + c) * n + j) * d + l)] = acc / z;
        }
      }
  return out;
}

struct MtsaRun {
  Tensor out;
  std::vector<Tensor> grads;  // q, k, v, s
};

MtsaRun run_mtsa(const MtsaInputs& in, DType dtype, SigmaT sigma_t) {
  std::vector<Tensor> leaves = {leaf(cast(in.q, dtype)), leaf(cast(in.k, dtype)), leaf(cast(in.v, dtype)),
                                leaf(cast(in.s, dtype))};
  TensorizedAttentionOptions o;
  o.sigma_t = sigma_t;
  Tensor out = tensorized_self_attention(leaves[0], leaves[1], leaves[2], leaves[3], in.positional, in.valid, o);
  weighted_sum(out, 99).backward();
  MtsaRun r{out.detach(), {}};
  for (const Tensor& t : leaves) r.grads.push_back(t.grad());
  return r;
}

// The reproduction of the NaN seen in training: under the forward mask the
// largest source2token score of every feature sits at the last token, which
// no query may attend, `spread` above the others. Algorithm 1 shifts S by that
// maximum, so every query's allowed terms are about exp(-spread) * E_R. At
// spread 86 with R = -6.25 (E_R = sigmoid(R) ~ 2e-3) the denominators are
// subnormal (~1e-40): before the fix the backward's grad / den overflowed to
// Inf and met the zeros of E_R and E_S as NaN. At spread 110 they are exactly
// 0: before the fix the output was 0 and every gradient 0.
TEST(MtsaExtremes, SourceScoresBeyondTheExpRangeOfTheAllowedKeys) {
  struct Case {
    double spread, qk;  // qk > 0: q = qk and k = -qk everywhere (R = -3 qk^2 / sqrt(3))
  };
  for (Case cs : {Case{86.0, 1.9}, Case{110.0, 0.0}})
  for (SigmaT sigma_t : {SigmaT::LogSigmoid, SigmaT::Identity}) {
    MtsaInputs in = mtsa_inputs(2, 2, 6, 3, {6, 6}, HeadMask::Forward, 5, 1.0, 1.0);
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t c = 0; c < 2; ++c)
        for (int64_t l = 0; l < 3; ++l) write_element(in.s, ((b * 2 + c) * 6 + 5) * 3 + l, cs.spread);
    if (cs.qk > 0) {
      in.q = full(in.q.shape(), cs.qk, DType::F64);
      in.k = full(in.k.shape(), -cs.qk, DType::F64);
    }
    const std::string name = std::string(sigma_t_name(sigma_t)) + ", spread " + std::to_string(cs.spread);
    MtsaRun f32 = run_mtsa(in, DType::F32, sigma_t);
    MtsaRun f64 = run_mtsa(in, DType::F64, sigma_t);
    ASSERT_EQ(first_non_finite(f32.out, "output"), "") << name;
    const char* names[] = {"q", "k", "v", "s"};
    for (int t = 0; t < 4; ++t) {
      ASSERT_EQ(first_non_finite(f32.grads[t], std::string("grad ") + names[t]), "") << name;
      EXPECT_GT(max_abs(f32.grads[t]), 0.0) << name << " grad " << names[t] << " is all zero";
    }
    // float64 against the direct evaluation of the equations: a handful of
    // roundings of values below 10 each.
    std::vector<double> want = mtsa_reference(in, sigma_t), got64 = f64.out.to_vector(), got32 = f32.out.to_vector();
    for (size_t i = 0; i < want.size(); ++i) {
      ASSERT_NEAR(got64[i], want[i], 1e-12) << name << " element " << i;
      // float32: inputs rounded to 2^-24 relative, exponents of scores up
      // to ~10 in size: a few times 1e-6.
      ASSERT_NEAR(got32[i], want[i], 2e-5) << name << " element " << i;
    }
    for (int t = 0; t < 4; ++t) {
      std::vector<double> g32 = f32.grads[t].to_vector(), g64 = f64.grads[t].to_vector();
      const double scale = std::max(1.0, max_abs(f64.grads[t]));
      for (size_t i = 0; i < g32.size(); ++i)
        ASSERT_NEAR(g32[i], g64[i], 1e-4 * scale) << name << " grad " << names[t] << " element " << i;
    }
  }
}

// The property: any finite scores, every head mask, both sigma_t, lengths from
// 0 to long, score magnitudes up to 1e6 (spreads ~1e4 times the exp range):
// finite outputs, finite gradients, padded queries exactly 0.
TEST(MtsaExtremes, FiniteForEveryMaskLengthAndScoreRange) {
  const int64_t n = 70;
  for (HeadMask mask : {HeadMask::Forward, HeadMask::Backward, HeadMask::None, HeadMask::Window})
    for (SigmaT sigma_t : {SigmaT::LogSigmoid, SigmaT::Identity})
      for (double range : {1.0, 60.0, 1e3, 1e6}) {
        const std::string where = std::string(head_mask_name(mask)) + "/" + sigma_t_name(sigma_t) + "/range " +
                                  std::to_string(range);
        MtsaInputs in = mtsa_inputs(4, 2, n, 4, {n, 1, 0, 33}, mask, 11, std::sqrt(range), range);
        for (Tensor* t : {&in.q, &in.k, &in.v, &in.s}) *t = cast(cast(*t, DType::F32), DType::F64);
        MtsaRun r = run_mtsa(in, DType::F32, sigma_t);
        ASSERT_EQ(first_non_finite(r.out, "output"), "") << where;
        for (int t = 0; t < 4; ++t) ASSERT_EQ(first_non_finite(r.grads[t], "grad"), "") << where << " input " << t;
        EXPECT_GT(max_abs(r.grads[2]), 0.0) << where << ": grad of v is all zero";
        // Example 2 is empty: its output is exactly zero.
        EXPECT_EQ(max_abs(narrow(r.out, 0, 2, 1)), 0.0) << where;
        // A convex combination of values in [-1, 1].
        EXPECT_LE(max_abs(r.out), 1.0 + 1e-6) << where;
        if (range > 60) continue;
        // Against the exact evaluation of the same (float32-rounded) inputs.
        // float32 rounds R (|R| <= 120 here) and S to about 4 * 2^-24 of
        // their size, shifting each exponent by < 3e-5, each probability by
        // that relative amount, and the output (|v| < 1) by < 1e-4.
        std::vector<double> want = mtsa_reference(in, sigma_t), got = r.out.to_vector();
        for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(got[i], want[i], 5e-4) << where << " element " << i;
      }
}

// ----------------------------------------------------- the fused attentions

TEST(SeparableAttentionExtremes, FiniteAndNormalisedUnderHugeScores) {
  Generator gen(21);
  const int64_t G = 3, n = 50, d = 5;
  for (double range : {1e2, 1e5, 1e30}) {
    Tensor a = leaf(rand_uniform({G, n, n}, -range, range, gen, DType::F32));
    Tensor s = leaf(rand_uniform({G, n, d}, -range, range, gen, DType::F32));
    Tensor v = leaf(rand_uniform({G, n, d}, -1, 1, gen, DType::F32));
    Tensor allowed = unsqueeze(direction_mask(n, Direction::Forward), 0);
    Tensor out = separable_attention(a, s, v, allowed);
    weighted_sum(out, 3).backward();
    ASSERT_EQ(first_non_finite(out, "output"), "") << range;
    // A convex combination of values in [-1, 1].
    EXPECT_LE(max_abs(out), 1.0 + 1e-6) << range;
    for (const Tensor* t : {&a, &s, &v}) ASSERT_EQ(first_non_finite(t->grad(), "grad"), "") << range;
  }
}

TEST(MultiDimAttentionExtremes, FiniteUnderHugeInputsAndEveryMask) {
  Generator gen(22);
  const int64_t B = 3, n = 60, d = 6;
  for (Direction dir : {Direction::Forward, Direction::Backward, Direction::None})
    for (double range : {1e2, 1e10, 1e30}) {
      Tensor q = leaf(rand_uniform({B, n, d}, -range, range, gen, DType::F32));
      Tensor k = leaf(rand_uniform({B, n, d}, -range, range, gen, DType::F32));
      Tensor v = leaf(rand_uniform({B, n, d}, -1, 1, gen, DType::F32));
      // Example 1 has one token, example 2 none.
      Tensor valid = length_mask({n, 1, 0}, n);
      Tensor mask = where(unsqueeze(valid, 1), unsqueeze(direction_mask(n, dir), 0), zeros({}, DType::U8));
      Tensor out = multi_dim_attention(q, k, v, mask, 5.0);
      weighted_sum(out, 4).backward();
      ASSERT_EQ(first_non_finite(out, "output"), "") << range;
      for (const Tensor* t : {&q, &k, &v}) ASSERT_EQ(first_non_finite(t->grad(), "grad"), "") << range;
    }
}

TEST(MaskedSoftmaxExtremes, FiniteForLogitsUpToTheFloatMaximum) {
  Generator gen(23);
  for (double range : {1e2, 1e20, 3e38}) {
    Tensor x = leaf(rand_uniform({4, 40}, -range, range, gen, DType::F32));
    // Row 2 fully masked, row 3 a single valid entry.
    std::vector<double> m(160, 1.0);
    for (int i = 80; i < 120; ++i) m[i] = 0;
    for (int i = 121; i < 160; ++i) m[i] = 0;
    Tensor mask = ne(from_vector(m, {4, 40}, DType::F32), zeros({}));
    Tensor p = softmax(x, 1, mask);
    weighted_sum(p, 5).backward();
    ASSERT_EQ(first_non_finite(p, "softmax"), "") << range;
    ASSERT_EQ(first_non_finite(x.grad(), "grad"), "") << range;
    EXPECT_NEAR(sum(narrow(p, 0, 0, 1)).item(), 1.0, 1e-5) << range;
    EXPECT_EQ(p.at({3, 0}), 1.0) << "a single valid entry takes all the mass";
  }
}

}  // namespace
}  // namespace attn
