// MTSA: Algorithm 1 against the literal tensorized form (Eq. 10-12), masks,
// padding, numerical safety, memory growth, attention dropout, both variants
// end to end, and config errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "test_util.h"
#include "attn/engine/allocator.h"
#include "attn/engine/error.h"
#include "model_checks.h"
#include "seeded_encoder_context.h"
#include "attn/models/mtsa.h"
#include "attn/ops/binary/binary.h"
#include "attn/engine/copy.h"
#include "attn/ops/dropout/dropout.h"
#include "attn/ops/factorized_attention/factorized_attention.h"
#include "attn/ops/matmul/matmul.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/ops/unary/unary.h"
#include "attn/ops/view/view.h"

namespace attn {
namespace {

using namespace testing_support;

using ::testing::HasSubstr;

// The TENSOR FORM of one TSA head per (b, c), written out as in Eq. 10-12 /
// Appendix A.2 with i = key, j = query, l = feature:
//   f[j][i][l] = sigma_t(<k_i, q_j> / sqrt(d)) + sigma_s(S[i][l])
//   p[j][.][l] = softmax over the keys i that query j may attend (M_ij = -inf
//                elsewhere), separately for every feature l
//   out[j][l]  = sum_i p[j][i][l] v[i][l]   (0 when query j has no allowed key)
// The whole n x n x d score tensor is built explicitly. Inputs are
// [B, h, n, d] tensors, positional [h, n, n] query-major, valid [B, n].
std::vector<double> tensor_form(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& s,
                                const Tensor& positional, const Tensor& valid, SigmaT sigma_t,
                                SigmaT sigma_s = SigmaT::Identity) {
  const int64_t B = q.size(0), H = q.size(1), n = q.size(2), d = q.size(3);
  std::vector<double> qv = q.to_vector(), kv = k.to_vector(), vv = v.to_vector(), sv = s.to_vector();
  std::vector<double> out(static_cast<size_t>(B * H * n * d), 0.0);
  auto at = [&](const std::vector<double>& t, int64_t b, int64_t c, int64_t i, int64_t l) {
    return t[static_cast<size_t>(((b * H + c) * n + i) * d + l)];
  };
  for (int64_t b = 0; b < B; ++b)
    for (int64_t c = 0; c < H; ++c) {
      std::vector<double> f(static_cast<size_t>(n * n * d));  // f[j][i][l]
      std::vector<bool> allowed(static_cast<size_t>(n * n));
      for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < n; ++i) {
          allowed[j * n + i] = positional.at({c, j, i}) != 0 && valid.at({b, i}) != 0 && valid.at({b, j}) != 0;
          double dot = 0;
          for (int64_t m = 0; m < d; ++m) dot += at(kv, b, c, i, m) * at(qv, b, c, j, m);
          double r = dot / std::sqrt(static_cast<double>(d));
          double t = sigma_t == SigmaT::LogSigmoid ? -std::log1p(std::exp(-r)) : r;
          for (int64_t l = 0; l < d; ++l) {
            const double si = at(sv, b, c, i, l);
            f[(j * n + i) * d + l] = t + (sigma_s == SigmaT::LogSigmoid ? -std::log1p(std::exp(-si)) : si);
          }
        }
      for (int64_t j = 0; j < n; ++j)
        for (int64_t l = 0; l < d; ++l) {
          double mx = -std::numeric_limits<double>::infinity();
          for (int64_t i = 0; i < n; ++i)
            if (allowed[j * n + i]) mx = std::max(mx, f[(j * n + i) * d + l]);
          if (mx == -std::numeric_limits<double>::infinity()) continue;  // no allowed key: 0
          double z = 0, acc = 0;
          for (int64_t i = 0; i < n; ++i)
            if (allowed[j * n + i]) {
              double e = std::exp(f[(j * n + i) * d + l] - mx);
              z += e;
              acc += e * at(vv, b, c, i, l);
            }
          out[static_cast<size_t>(((b * H + c) * n + j) * d + l)] = acc / z;
        }
    }
  return out;
}

struct AttentionInputs {
  Tensor q, k, v, s;
};

AttentionInputs random_heads(int64_t b, int64_t h, int64_t n, int64_t d, uint64_t seed, double score_scale = 1.0,
                             DType dtype = DType::F64) {
  Generator g(seed);
  AttentionInputs a;
  a.q = rand_uniform({b, h, n, d}, -score_scale, score_scale, g, dtype);
  a.k = rand_uniform({b, h, n, d}, -score_scale, score_scale, g, dtype);
  a.v = rand_uniform({b, h, n, d}, -1, 1, g, dtype);
  a.s = rand_uniform({b, h, n, d}, -2, 2, g, dtype);
  return a;
}

bool all_finite(const Tensor& t) {
  for (double x : t.to_vector())
    if (!std::isfinite(x)) return false;
  return true;
}

MtsaOptions options_for(MtsaVariant variant, SigmaT sigma_t, std::vector<HeadMask> masks = {}) {
  MtsaOptions o;
  o.activation = Activation::Elu;  // smooth, so finite differences never straddle a kink
  o.heads = 2;
  o.variant = variant;
  o.sigma_t = sigma_t;
  o.head_masks = std::move(masks);
  return o;
}

TEST(MtsaAttention, Algorithm1EqualsTensorFormWithMasksAndPadding) {
  // Heads: forward, backward, none, window(1); one example padded (length 4 of 6).
  std::vector<HeadMask> masks = {HeadMask::Forward, HeadMask::Backward, HeadMask::None, HeadMask::Window};
  const int64_t n = 6, d = 5;
  Tensor positional = head_mask_tensor(masks, n, 1);
  Tensor valid = length_mask({6, 4}, n);
  for (SigmaT st : {SigmaT::LogSigmoid, SigmaT::Identity}) {
    AttentionInputs a = random_heads(2, 4, n, d, 21, 2.0);
    TensorizedAttentionOptions o;
    o.sigma_t = st;
    Tensor got = tensorized_self_attention(a.q, a.k, a.v, a.s, positional, valid, o);
    ASSERT_EQ(got.shape(), Shape({2, 4, n, d}));
    std::vector<double> expected = tensor_form(a.q, a.k, a.v, a.s, positional, valid, st);
    std::vector<double> g = got.to_vector();
    int64_t nonzero = 0;
    for (size_t i = 0; i < g.size(); ++i) {
      ASSERT_NEAR(g[i], expected[i], 1e-10) << sigma_t_name(st) << " element " << i;
      nonzero += expected[i] != 0.0;
    }
    EXPECT_GT(nonzero, static_cast<int64_t>(g.size()) / 2);  // the comparison is not vacuous
  }
}

// The fused two-GEMM op (ops/factorized_attention/factorized_attention.h) against the composed
// form it replaces, forward and every input gradient, for each sigma_t and
// sigma_s, with NaN in the padded rows of every operand (both forms select
// them out). float64: the two differ only by rounding (a few ulp of the
// O(1) values through n-term sums). float32 fused against float64 composed:
// float32 rounding through the same sums, ~1e-6 relative; 1e-4 absolute on
// outputs and gradients of magnitude <= ~10.
TEST(MtsaAttention, FusedOpMatchesTheComposedFormWithGradients) {
  std::vector<HeadMask> masks = {HeadMask::Forward, HeadMask::Backward, HeadMask::None, HeadMask::Window};
  const int64_t n = 7, d = 5;
  const Tensor positional = head_mask_tensor(masks, n, 1);
  const Tensor valid = length_mask({7, 4, 1}, n);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (SigmaT st : {SigmaT::LogSigmoid, SigmaT::Identity})
    for (SigmaT ss : {SigmaT::Identity, SigmaT::LogSigmoid}) {
      AttentionInputs a = random_heads(3, 4, n, d, 31, 2.0);
      const Tensor padded = unsqueeze(unsqueeze(eq(valid, zeros({}, DType::U8)), 1), -1);
      Generator wg(32);
      const Tensor w = rand_uniform({3, 4, n, d}, -1, 1, wg, DType::F64);
      auto run = [&](bool fused, DType dt) {
        std::vector<Tensor> in;
        for (const Tensor& t : {a.q, a.k, a.v, a.s}) in.push_back(cast(masked_fill(t, padded, nan), dt).set_requires_grad(true));
        TensorizedAttentionOptions o;
        o.sigma_t = st;
        o.sigma_s = ss;
        o.fused = fused;
        Tensor out = tensorized_self_attention(in[0], in[1], in[2], in[3], positional, valid, o);
        sum(out * cast(w, dt)).backward();
        std::vector<std::vector<double>> values = {out.to_vector()};
        for (const Tensor& t : in) values.push_back(t.grad().to_vector());
        return values;
      };
      const auto composed = run(false, DType::F64);
      const std::string where = std::string(sigma_t_name(st)) + "/" + sigma_t_name(ss);
      for (DType dt : {DType::F64, DType::F32}) {
        const auto fused = run(true, dt);
        const double tol = dt == DType::F64 ? 1e-12 : 1e-4;
        for (size_t t = 0; t < fused.size(); ++t) {
          int64_t nonzero = 0;
          for (size_t i = 0; i < fused[t].size(); ++i) {
            ASSERT_TRUE(std::isfinite(fused[t][i])) << where << " tensor " << t << " element " << i;
            ASSERT_NEAR(fused[t][i], composed[t][i], tol) << where << " " << dtype_name(dt) << " tensor " << t
                                                          << " element " << i;
            nonzero += fused[t][i] != 0.0;
          }
          EXPECT_GT(nonzero, static_cast<int64_t>(fused[t].size()) / 3) << where << " tensor " << t;
        }
      }
    }
}

TEST(MtsaAttention, FusedOpNamesBadOperands) {
  AttentionInputs a = random_heads(2, 2, 4, 3, 41);
  const Tensor positional = head_mask_tensor({HeadMask::Forward, HeadMask::Backward}, 4, 1);
  const Tensor valid = length_mask({4, 2}, 4);
  std::string m = error_of([&] { factorized_attention(a.q, a.k, a.v, a.s, positional, length_mask({4}, 4), true, false); });
  EXPECT_THAT(m, HasSubstr("valid must be uint8 [B, n] = [2, 4]"));
  m = error_of([&] { factorized_attention(a.q, a.k, a.v, a.s, head_mask_tensor({HeadMask::Forward}, 4, 1), valid, true, false); });
  EXPECT_THAT(m, HasSubstr("positional mask must be uint8 [h, n, n] = [2, 4, 4]"));
  m = error_of([&] { factorized_attention(a.q, a.k, reshape(a.v, {2, 2, 3, 4}), a.s, positional, valid, true, false); });
  EXPECT_THAT(m, HasSubstr("v must be [B, h, n, d] = [2, 2, 4, 3]"));
  m = error_of([&] { factorized_attention(a.q, cast(a.k, DType::F32), a.v, a.s, positional, valid, true, false); });
  EXPECT_THAT(m, HasSubstr("k is float32"));
}

// Masks are "nonzero = allowed": 2 must read as 1 does.
TEST(MtsaAttention, FusedOpReadsAnyNonzeroMaskValueAsAllowed) {
  AttentionInputs a = random_heads(2, 2, 5, 3, 43);
  const Tensor positional = head_mask_tensor({HeadMask::Forward, HeadMask::Backward}, 5, 1);
  const Tensor valid = length_mask({5, 3}, 5);
  const Tensor wide_positional = cast(mul_scalar(cast(positional, DType::F64), 2.0), DType::U8);
  const Tensor wide_valid = cast(mul_scalar(cast(valid, DType::F64), 2.0), DType::U8);
  const std::vector<double> want = factorized_attention(a.q, a.k, a.v, a.s, positional, valid, true, false).out.to_vector();
  // 2 against 1 shares no bit: a bitwise test of the two masks would block every pair.
  EXPECT_EQ(factorized_attention(a.q, a.k, a.v, a.s, wide_positional, valid, true, false).out.to_vector(), want);
  EXPECT_EQ(factorized_attention(a.q, a.k, a.v, a.s, positional, wide_valid, true, false).out.to_vector(), want);
}

TEST(MtsaAttention, LogSigmoidSigmaSEqualsTensorForm) {
  // App. A.1: sigma_s is a hyper-parameter like sigma_t. Checked with
  // moderate scores and with scores large enough to underflow exp().
  std::vector<HeadMask> masks = {HeadMask::Forward, HeadMask::Backward};
  const int64_t n = 5, d = 3;
  Tensor positional = head_mask_tensor(masks, n, 1);
  Tensor valid = length_mask({5, 3}, n);
  for (double scale : {2.0, 20.0}) {
    // At scale 20 the scores reach a few hundred, so exp() of some of them
    // underflows; S is scaled alike so that sigma_s still matters.
    AttentionInputs a = random_heads(2, 2, n, d, 23, scale);
    a.s = mul_scalar(a.s, scale * scale / 4);
    TensorizedAttentionOptions o;
    o.sigma_t = SigmaT::Identity;
    o.sigma_s = SigmaT::LogSigmoid;
    std::vector<double> got = tensorized_self_attention(a.q, a.k, a.v, a.s, positional, valid, o).to_vector();
    std::vector<double> want = tensor_form(a.q, a.k, a.v, a.s, positional, valid, SigmaT::Identity, SigmaT::LogSigmoid);
    std::vector<double> identity = tensor_form(a.q, a.k, a.v, a.s, positional, valid, SigmaT::Identity);
    double differs = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_NEAR(got[i], want[i], 1e-9) << "scale " << scale << " element " << i;
      differs = std::max(differs, std::fabs(want[i] - identity[i]));
    }
    EXPECT_GT(differs, 1e-3);  // sigma_s changes the function
  }
}

TEST(Mtsa, GradcheckWithLogSigmoidSigmaS) {
  Generator gen(45);
  MtsaOptions o = options_for(MtsaVariant::Original, SigmaT::LogSigmoid);
  o.sigma_s = SigmaT::LogSigmoid;
  Mtsa model(3, 4, o, gen, nullptr, DType::F64);
  Tensor x = random_input({2, 5, 3}, 46);
  Tensor mask = length_mask({5, 3}, 5);
  expect_gradcheck(model, x, [&] { return flat_outputs(model.encode(x, mask)); });
}

// The scale function matters: log-sigmoid and identity give different outputs.
TEST(MtsaAttention, SigmaTChoicesDiffer) {
  AttentionInputs a = random_heads(1, 2, 5, 3, 23, 2.0);
  Tensor positional = head_mask_tensor({HeadMask::None, HeadMask::None}, 5, 0);
  Tensor valid = length_mask({5}, 5);
  TensorizedAttentionOptions ls, id;
  id.sigma_t = SigmaT::Identity;
  Tensor x = tensorized_self_attention(a.q, a.k, a.v, a.s, positional, valid, ls);
  Tensor y = tensorized_self_attention(a.q, a.k, a.v, a.s, positional, valid, id);
  EXPECT_GT(max(abs(x - y)).item(), 1e-3);
}

TEST(MtsaAttention, QueriesWithNoAllowedKeyOutputZero) {
  const int64_t n = 5, d = 3;
  Tensor positional = head_mask_tensor({HeadMask::Forward, HeadMask::Backward}, n, 0);
  Tensor valid = length_mask({5, 3}, n);
  for (SigmaT st : {SigmaT::LogSigmoid, SigmaT::Identity}) {
    AttentionInputs a = random_heads(2, 2, n, d, 25);
    a.q.set_requires_grad(true);
    a.s.set_requires_grad(true);
    TensorizedAttentionOptions o;
    o.sigma_t = st;
    Tensor h = tensorized_self_attention(a.q, a.k, a.v, a.s, positional, valid, o);
    for (int64_t b = 0; b < 2; ++b) {
      int64_t last = b == 0 ? 4 : 2;
      for (int64_t l = 0; l < d; ++l) {
        EXPECT_EQ(h.at({b, 0, 0, l}), 0.0);     // forward head, first token
        EXPECT_EQ(h.at({b, 1, last, l}), 0.0);  // backward head, last real token
        EXPECT_NE(h.at({b, 0, 1, l}), 0.0);     // the next token sees token 0
      }
    }
    sum(h * h).backward();
    EXPECT_TRUE(all_finite(a.q.grad()));
    EXPECT_TRUE(all_finite(a.s.grad()));
  }
}

// In the original variant the first token under the forward mask has H = 0,
// so the gate gives out = g * v with g = sigmoid([v; 0] W_g + b_g).
TEST(Mtsa, FirstTokenUnderForwardMaskIsGatedValue) {
  Generator gen(31);
  MtsaLayer layer(3, 4, options_for(MtsaVariant::Original, SigmaT::LogSigmoid, {HeadMask::Forward, HeadMask::Forward}),
                  gen, nullptr, DType::F64);
  Tensor x = random_input({2, 4, 3}, 32).detach();
  Tensor valid = length_mask({4, 2}, 4);
  MtsaLayer::Heads hd = layer.attend(x, valid);
  Tensor out = layer.forward(x, valid);
  Tensor wg, bg;
  for (const auto& [name, p] : layer.named_parameters()) {
    if (name == "gate.weight") wg = p;
    if (name == "gate.bias") bg = p;
  }
  ASSERT_TRUE(wg.defined() && bg.defined());
  const int64_t dh = 2;
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t c = 0; c < 2; ++c)
      for (int64_t l = 0; l < dh; ++l) {
        EXPECT_EQ(hd.h.at({b, c, 0, l}), 0.0);
        double z = bg.at({c, 0, l});
        for (int64_t m = 0; m < dh; ++m) z += hd.v.at({b, c, 0, m}) * wg.at({c, m, l});
        double expected = hd.v.at({b, c, 0, l}) / (1.0 + std::exp(-z));
        EXPECT_NEAR(out.at({b, 0, c * dh + l}), expected, 1e-12);
      }
}

TEST(MtsaAttention, IdentitySigmaWithHugeScoresStaysFinite) {
  const int64_t n = 6, d = 4;
  Tensor positional = head_mask_tensor({HeadMask::Forward, HeadMask::None}, n, 0);
  Tensor valid = length_mask({6, 3}, n);
  AttentionInputs a = random_heads(2, 2, n, d, 27, 40.0);  // |R| up to ~3000: exp(R) overflows unshifted
  a.q.set_requires_grad(true);
  a.k.set_requires_grad(true);
  a.v.set_requires_grad(true);
  a.s.set_requires_grad(true);
  TensorizedAttentionOptions o;
  o.sigma_t = SigmaT::Identity;
  Tensor h = tensorized_self_attention(a.q, a.k, a.v, a.s, positional, valid, o);
  ASSERT_TRUE(all_finite(h));
  EXPECT_GT(max(abs(h)).item(), 100.0 * std::numeric_limits<double>::epsilon());
  std::vector<double> expected = tensor_form(a.q, a.k, a.v, a.s, positional, valid, SigmaT::Identity);
  std::vector<double> g = h.to_vector();
  for (size_t i = 0; i < g.size(); ++i) ASSERT_NEAR(g[i], expected[i], 1e-9) << "element " << i;
  sum(h * h).backward();
  for (const Tensor& t : {a.q, a.k, a.v, a.s}) EXPECT_TRUE(all_finite(t.grad()));
  // float32 too: scores of ~3000 would overflow exp() without the shift.
  TensorizedAttentionOptions o32 = o;
  AttentionInputs f = random_heads(2, 2, n, d, 27, 40.0, DType::F32);
  EXPECT_TRUE(all_finite(tensorized_self_attention(f.q, f.k, f.v, f.s, positional, valid, o32)));
}

// Algorithm 1 never builds the [B, h, n, n, d_h] tensor: the peak memory of a
// forward (graph and saved tensors included) stays well below one such tensor,
// and growing d_h at fixed n grows the peak only through the O(n d_h) terms.
TEST(MtsaAttention, PeakMemoryHasNoNSquaredTimesDTerm) {
  auto peak_of = [](int64_t n, int64_t d) {
    AttentionInputs a = random_heads(2, 2, n, d, 29, 1.0, DType::F32);
    for (Tensor* t : {&a.q, &a.k, &a.v, &a.s}) t->set_requires_grad(true);
    Tensor positional = head_mask_tensor({HeadMask::Forward, HeadMask::Backward}, n, 0);
    Tensor valid = length_mask({n, n / 2}, n);
    Allocator& alloc = allocator_for(Device::CPU);
    const int64_t before = alloc.stats().current_bytes;
    alloc.reset_peak();
    Tensor h = tensorized_self_attention(a.q, a.k, a.v, a.s, positional, valid, {});
    const int64_t peak = alloc.stats().peak_bytes - before;
    EXPECT_TRUE(all_finite(h));
    return peak;
  };
  const int64_t n = 128, d = 128;
  const int64_t four_d_bytes = 2 * 2 * n * n * d * static_cast<int64_t>(sizeof(float));
  const int64_t big = peak_of(n, d);
  EXPECT_LT(big, four_d_bytes / 4) << "peak " << big << " bytes vs one n x n x d_h tensor of " << four_d_bytes;
  // d_h x4 at fixed n: an O(n^2 d_h) peak would grow ~4x.
  const int64_t small = peak_of(n, d / 4);
  EXPECT_LT(static_cast<double>(big) / static_cast<double>(small), 3.0) << big << " vs " << small;
}

// Attention dropout: both numerator factors are dropped (keep sqrt(p) each,
// E_R's mask drawn first), the denominator is the undropped E_R E_S.
TEST(MtsaAttention, DropoutTouchesOnlyTheNumerator) {
  const int64_t n = 5, d = 3;
  Tensor positional = head_mask_tensor({HeadMask::Forward, HeadMask::Backward}, n, 0);
  Tensor valid = length_mask({5, 4}, n);
  AttentionInputs a = random_heads(2, 2, n, d, 33);
  Generator g1(77), g2(77);
  TensorizedAttentionOptions o;
  o.attn_keep_prob = 0.64;
  o.gen = &g1;
  o.training = true;
  Tensor got = tensorized_self_attention(a.q, a.k, a.v, a.s, positional, valid, o);

  // Reference without any shift (the shifts cancel): E_R = sigmoid(R) * mask, E_S = exp(S) * valid.
  Tensor allowed = cast(where(unsqueeze(unsqueeze(valid, 1), 1), unsqueeze(positional, 0), zeros({}, DType::U8)),
                        DType::F64);
  allowed = allowed * cast(unsqueeze(unsqueeze(valid, 1), -1), DType::F64);
  Tensor e_r = sigmoid(mul_scalar(matmul(a.q, transpose(a.k, -1, -2)), 1.0 / std::sqrt(3.0))) * allowed;
  Tensor e_s = exp(a.s) * cast(unsqueeze(unsqueeze(valid, 1), -1), DType::F64);
  Tensor den = matmul(e_r, e_s);
  Tensor e_r_dropped = dropout(e_r, 0.2, g2);  // drawn first, as documented
  Tensor e_s_dropped = dropout(e_s, 0.2, g2);
  Tensor num = matmul(e_r_dropped, a.v * e_s_dropped);
  std::vector<double> gv = got.to_vector(), nv = num.to_vector(), dv = den.to_vector();
  int64_t dropped_any = 0;
  for (size_t i = 0; i < gv.size(); ++i) {
    double expected = dv[i] > 0 ? nv[i] / dv[i] : 0.0;
    ASSERT_NEAR(gv[i], expected, 1e-12) << "element " << i;
  }
  // Dropout did something, and evaluation mode ignores it.
  o.training = false;
  Tensor eval = tensorized_self_attention(a.q, a.k, a.v, a.s, positional, valid, o);
  std::vector<double> ev = eval.to_vector();
  for (size_t i = 0; i < gv.size(); ++i) dropped_any += std::abs(gv[i] - ev[i]) > 1e-9;
  EXPECT_GT(dropped_any, 0);
}

TEST(Mtsa, GradcheckOriginalVariantWithPadding) {
  for (SigmaT st : {SigmaT::LogSigmoid, SigmaT::Identity}) {
    Generator gen(41);
    Mtsa model(3, 4, options_for(MtsaVariant::Original, st), gen, nullptr, DType::F64);
    Tensor x = random_input({2, 5, 3}, 42);
    Tensor mask = length_mask({5, 3}, 5);
    SCOPED_TRACE(sigma_t_name(st));
    expect_gradcheck(model, x, [&] { return flat_outputs(model.encode(x, mask)); });
  }
}

TEST(Mtsa, GradcheckPaperVariantWithPadding) {
  for (SigmaT st : {SigmaT::LogSigmoid, SigmaT::Identity}) {
    Generator gen(43);
    Mtsa model(3, 4, options_for(MtsaVariant::Paper, st), gen, nullptr, DType::F64);
    Tensor x = random_input({2, 5, 3}, 44);
    Tensor mask = length_mask({5, 3}, 5);
    SCOPED_TRACE(sigma_t_name(st));
    expect_gradcheck(model, x, [&] { return flat_outputs(model.encode(x, mask)); });
  }
}

TEST(Mtsa, GradcheckWithNoneAndWindowMasks) {
  Generator gen(45);
  MtsaOptions o = options_for(MtsaVariant::Original, SigmaT::Identity, {HeadMask::None, HeadMask::Window});
  o.window = 1;
  Mtsa model(3, 4, o, gen, nullptr, DType::F64);
  Tensor x = random_input({2, 4, 3}, 46);
  Tensor mask = length_mask({4, 2}, 4);
  expect_gradcheck(model, x, [&] { return flat_outputs(model.encode(x, mask)); });
}

TEST(Mtsa, PaddedPositionsChangeNoValidOutput) {
  for (MtsaVariant var : {MtsaVariant::Original, MtsaVariant::Paper})
    for (SigmaT st : {SigmaT::LogSigmoid, SigmaT::Identity}) {
      Generator gen(47);
      Mtsa model(3, 4, options_for(var, st), gen, nullptr, DType::F64);
      SCOPED_TRACE(std::string(mtsa_variant_name(var)) + " " + sigma_t_name(st));
      expect_padding_invariant(model, random_input({3, 5, 3}, 48), length_mask({5, 2, 0}, 5));
    }
}

TEST(Mtsa, EmptySequenceGivesZerosAndFiniteGradients) {
  for (MtsaVariant var : {MtsaVariant::Original, MtsaVariant::Paper}) {
    Generator gen(49);
    Mtsa model(3, 4, options_for(var, SigmaT::Identity), gen, nullptr, DType::F64);
    Tensor x = random_input({2, 3, 3}, 50);
    Tensor mask = length_mask({0, 1}, 3);  // an empty example, and one whose only token has no key
    EncoderOutput o = model.encode(x, mask);
    ASSERT_TRUE(all_finite(o.tokens));
    ASSERT_TRUE(all_finite(o.sentence));
    for (int64_t k = 0; k < 4; ++k) EXPECT_EQ(o.sentence.at({0, k}), 0.0);
    for (int64_t t = 0; t < 3; ++t)
      for (int64_t k = 0; k < 4; ++k) EXPECT_EQ(o.tokens.at({0, t, k}), 0.0);
    sum(o.sentence + sum(o.tokens, {1})).backward();
    for (const Tensor& p : model.parameters()) ASSERT_TRUE(all_finite(p.grad()));
    ASSERT_TRUE(all_finite(x.grad()));
  }
}

// Forward heads only: token t depends on tokens <= t, so editing the last
// token changes no earlier output; backward heads the mirror image. (Exactly
// so mathematically; in floating point the per-feature shift of S, a max
// over all valid tokens, can move the last bits.)
TEST(Mtsa, DirectionalHeadsAreCausal) {
  for (HeadMask m : {HeadMask::Forward, HeadMask::Backward})
    for (MtsaVariant var : {MtsaVariant::Original, MtsaVariant::Paper}) {
      Generator gen(51);
      MtsaLayer layer(3, 4, options_for(var, SigmaT::LogSigmoid, {m, m}), gen, nullptr, DType::F64);
      Tensor x = random_input({1, 5, 3}, 52).detach();
      Tensor mask = length_mask({5}, 5);
      Tensor before = layer.forward(x, mask);
      Tensor changed = x.detach();
      const int64_t edit = m == HeadMask::Forward ? 4 : 0;
      for (int64_t k = 0; k < 3; ++k) write_element(changed, edit * 3 + k, 2.0 + k);
      Tensor after = layer.forward(changed, mask);
      for (int64_t t = 0; t < 5; ++t) {
        const bool may_change = t == edit || (m == HeadMask::Forward ? t > edit : t < edit);
        double diff = 0;
        for (int64_t k = 0; k < 4; ++k) diff += std::abs(before.at({0, t, k}) - after.at({0, t, k}));
        if (may_change) {
          EXPECT_GT(diff, 1e-6) << head_mask_name(m) << " token " << t;
        } else {
          EXPECT_LT(diff, 1e-13) << head_mask_name(m) << " token " << t;
        }
      }
    }
}

std::vector<std::string> names_of(const Module& m) {
  std::vector<std::string> names;
  for (const auto& [name, p] : m.named_parameters()) names.push_back(name);
  return names;
}

TEST(Mtsa, ParameterNamesAndShapesAreStable) {
  Generator gen(53);
  Mtsa original(5, 6, options_for(MtsaVariant::Original, SigmaT::LogSigmoid), gen, nullptr);
  EXPECT_EQ(names_of(original),
            (std::vector<std::string>{"mtsa.v.weight", "mtsa.v.bias", "mtsa.q.weight", "mtsa.k.weight",
                                      "mtsa.s1.weight", "mtsa.s1.bias", "mtsa.s2.weight", "mtsa.s2.bias",
                                      "mtsa.gate.weight", "mtsa.gate.bias", "s2t.w1.weight", "s2t.w1.bias",
                                      "s2t.w2.weight", "s2t.w2.bias"}));
  std::vector<Tensor> p = original.parameters();
  EXPECT_EQ(p[0].shape(), Shape({6, 5}));     // v: input 5 -> hidden 6
  EXPECT_EQ(p[2].shape(), Shape({2, 3, 3}));  // q: per head d_h x d_h
  EXPECT_EQ(p[8].shape(), Shape({2, 6, 3}));  // gate: per head [v; H] (2 d_h) -> d_h
  EXPECT_EQ(p[9].shape(), Shape({2, 1, 3}));
  Mtsa paper(5, 6, options_for(MtsaVariant::Paper, SigmaT::LogSigmoid), gen, nullptr);
  EXPECT_EQ(names_of(paper), (std::vector<std::string>{"mtsa.q.weight", "mtsa.k.weight", "mtsa.v.weight",
                                                       "mtsa.s1.weight", "mtsa.s1.bias", "mtsa.s2.weight",
                                                       "mtsa.s2.bias", "mtsa.out.weight", "s2t.w1.weight",
                                                       "s2t.w1.bias", "s2t.w2.weight", "s2t.w2.bias"}));
  EXPECT_EQ(original.token_dim(), 6);
  EXPECT_EQ(paper.sentence_dim(), 6);
}

TEST(Mtsa, Float32AgreesWithFloat64) {
  for (MtsaVariant var : {MtsaVariant::Original, MtsaVariant::Paper}) {
    Generator g64(55), g32(55);
    Mtsa m64(3, 4, options_for(var, SigmaT::Identity), g64, nullptr, DType::F64);
    Mtsa m32(3, 4, options_for(var, SigmaT::Identity), g32, nullptr, DType::F32);
    Tensor x = random_input({2, 5, 3}, 56).detach();
    Tensor mask = length_mask({5, 3}, 5);
    std::vector<double> a = flat_outputs(m64.encode(x, mask)).to_vector();
    Tensor y32 = flat_outputs(m32.encode(cast(x, DType::F32), mask));
    EXPECT_EQ(y32.dtype(), DType::F32);
    std::vector<double> b = y32.to_vector();
    for (size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a[i], b[i], 1e-5);
  }
}

TEST(Mtsa, AttentionDropoutOnlyInTraining) {
  Generator gen_a(57), gen_b(57), noise(58);
  MtsaOptions o = options_for(MtsaVariant::Original, SigmaT::LogSigmoid);
  MtsaOptions plain = o;
  o.attn_keep_prob = 0.5;
  Mtsa dropped(3, 4, o, gen_a, &noise, DType::F64);
  Mtsa reference(3, 4, plain, gen_b, nullptr, DType::F64);
  Tensor x = random_input({2, 5, 3}, 59).detach();
  Tensor mask = length_mask({5, 4}, 5);
  Tensor train = dropped.encode(x, mask).tokens;
  Tensor ref = reference.encode(x, mask).tokens;
  EXPECT_TRUE(all_finite(train));
  EXPECT_GT(max(abs(train - ref)).item(), 1e-6);
  dropped.set_training(false);
  EXPECT_EQ(max(abs(dropped.encode(x, mask).tokens - ref)).item(), 0.0);
}

TEST(Mtsa, ConfigAndShapeErrors) {
  SeededEncoderContext ctx(5, 61, 62);
  auto build = [&](const std::string& text) { return build_mtsa_encoder(Config::parse(text), ctx); };
  EXPECT_THAT(error_of([&] { build("hidden = 300\nheads = 8"); }), HasSubstr("hidden 300 is not divisible by heads 8"));
  EXPECT_THAT(error_of([&] { build("hidden = 6\nheads = 3"); }), HasSubstr("even number of heads"));
  EXPECT_THAT(error_of([&] { build("sigma_t = tanh"); }),
              HasSubstr("key 'sigma_t' of mtsa must be one of logsigmoid, identity, got 'tanh'"));
  EXPECT_THAT(error_of([&] { build("mtsa_variant = fast"); }),
              HasSubstr("key 'mtsa_variant' of mtsa must be one of original, paper, got 'fast'"));
  EXPECT_THAT(error_of([&] { build("hidden = 6\nheads = 3\nhead_masks = forward,backward"); }),
              HasSubstr("names 2 masks for 3 heads"));
  EXPECT_THAT(error_of([&] { build("head_masks = forward,sideways"); }), HasSubstr("unknown head mask 'sideways'"));
  EXPECT_THAT(error_of([&] { build("attn_keep_prob = 0"); }),
              HasSubstr("key 'attn_keep_prob' of mtsa must lie in (0, 1], got '0'"));
  EXPECT_THAT(error_of([&] { build("head_masks = window\nwindow = -1"); }),
              HasSubstr("key 'window' of mtsa must lie in 0..1048576, got '-1'"));
  Generator gen(63);
  MtsaOptions o;
  o.attn_keep_prob = 0.9;
  EXPECT_THAT(error_of([&] { MtsaLayer(3, 4, o, gen, nullptr); }), HasSubstr("needs a noise generator"));
  std::unique_ptr<Encoder> enc = build("hidden = 4");
  EXPECT_THAT(error_of([&] { enc->encode(zeros({2, 3, 4}, DType::F64), length_mask({3, 3}, 3)); }),
              HasSubstr("expects x of shape [B, n, 5], got [2, 3, 4]"));
  EXPECT_THAT(error_of([&] { enc->encode(zeros({2, 3, 5}, DType::F64), length_mask({3}, 3)); }),
              HasSubstr("mask must be uint8 [B, n]"));
}

TEST(Mtsa, BuilderReadsEveryKeyAndDefaults) {
  SeededEncoderContext ctx(5, 65, 66);
  Config c = Config::parse(
      "hidden = 6\nheads = 3\nactivation = relu\nsigma_t = identity\nmtsa_variant = paper\n"
      "head_masks = forward, window, none\nwindow = 1\nattn_keep_prob = 0.9\n");
  std::unique_ptr<Encoder> enc = build_mtsa_encoder(c, ctx);
  EXPECT_NO_THROW(c.check_all_used("mtsa"));
  EXPECT_EQ(enc->token_dim(), 6);
  EncoderOutput o = enc->encode(random_input({2, 4, 5}, 67).detach(), length_mask({4, 2}, 4));
  EXPECT_EQ(o.tokens.shape(), Shape({2, 4, 6}));
  EXPECT_EQ(o.sentence.shape(), Shape({2, 6}));
  EXPECT_TRUE(all_finite(o.sentence));
  // Defaults: hidden 300 in 2 heads (forward, backward), original variant.
  std::unique_ptr<Encoder> def = build_mtsa_encoder(Config(), ctx);
  EXPECT_EQ(def->token_dim(), 300);
  const auto& layer = dynamic_cast<Mtsa&>(*def).layer();
  EXPECT_EQ(layer.heads(), 2);
  EXPECT_EQ(layer.options().variant, MtsaVariant::Original);
  EXPECT_EQ(layer.options().sigma_t, SigmaT::LogSigmoid);
  EXPECT_EQ(layer.options().head_masks, (std::vector<HeadMask>{HeadMask::Forward, HeadMask::Backward}));
}

}  // namespace
}  // namespace attn
