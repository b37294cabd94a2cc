// RSS, ReSA and ReSAN: end-to-end gradchecks with the selection fixed, a
// gradcheck of log pi(z) for a fixed sample, padding invariance, empty
// sequences, the select-all reduction against a loop computation from the
// module's own parameters, sampling statistics, the unselected-head
// fallback, log pi by hand, the parameter split and config errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>

#include "test_util.h"
#include "attn/engine/error.h"
#include "model_checks.h"
#include "seeded_encoder_context.h"
#include "attn/models/attention_trace.h"
#include "attn/models/disa.h"
#include "attn/models/resan.h"
#include "attn/train/pictures/explain_svg.h"
#include "attn/models/rss.h"
#include "attn/ops/binary/binary.h"
#include "attn/engine/copy.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/ops/view/view.h"
#include "attn/models/masks.h"
#include "attn/nn/activation.h"
#include "attn/ops/matmul/matmul.h"
#include "attn/ops/join/join.h"

namespace attn {
namespace {

using namespace testing_support;

using ::testing::HasSubstr;

Tensor param(const Module& m, const std::string& name) {
  for (const auto& [n, p] : m.named_parameters())
    if (n == name) return p;
  ADD_FAILURE() << "no parameter named " << name;
  return Tensor();
}

Tensor u8(const std::vector<double>& v, const Shape& shape) { return cast(from_vector(v, shape, DType::F64), DType::U8); }

ResanOptions small_options(ResaVariant variant = ResaVariant::Full, bool bidirectional = true) {
  ResanOptions o;
  o.hidden = 3;
  o.rss_hidden = 3;
  o.variant = variant;
  o.bidirectional = bidirectional;
  o.keep_prob = 1.0;
  o.activation = Activation::Elu;  // the loop reference's (and smooth for gradchecks)
  return o;
}

// ---------- A loop implementation of the equations, for comparisons ----------

using Vec = std::vector<double>;

Vec linear_ref(const Tensor& w, const Tensor& b, const Vec& v) {
  Vec y(static_cast<size_t>(w.size(0)), 0.0);
  for (int64_t o = 0; o < w.size(0); ++o) {
    double acc = b.defined() ? b.at({o}) : 0.0;
    for (int64_t i = 0; i < w.size(1); ++i) acc += w.at({o, i}) * v[static_cast<size_t>(i)];
    y[static_cast<size_t>(o)] = acc;
  }
  return y;
}

double elu_ref(double v) { return v > 0 ? v : std::exp(v) - 1.0; }
double sigmoid_ref(double v) { return 1.0 / (1.0 + std::exp(-v)); }

bool direction_allows(Direction dir, int64_t i, int64_t j) {
  if (i == j) return false;
  return dir == Direction::Forward ? j < i : dir == Direction::Backward ? j > i : true;
}

// ReSA's output for example b, from the parameters of a Resa block under `prefix`.
std::vector<Vec> resa_ref(const Module& m, const std::string& prefix, const Tensor& x, int64_t b,
                          const std::vector<int>& valid, const std::vector<int>& zh, const std::vector<int>& zd,
                          Direction dir, bool keep_unselected, double c = 5.0,
                          UnselectedHeadPool pool = UnselectedHeadPool::AllTokens,
                          std::vector<Vec>* gates = nullptr) {
  const int64_t n = x.size(1), d_in = x.size(2);
  Tensor fc_w = param(m, prefix + "fc.weight"), fc_b = param(m, prefix + "fc.bias");
  Tensor wh = param(m, prefix + "w_head.weight"), wd = param(m, prefix + "w_dep.weight");
  Tensor bias = param(m, prefix + "bias");
  Tensor gw = param(m, prefix + "gate.proj.weight"), gb = param(m, prefix + "gate.proj.bias");
  const int64_t d = fc_w.size(0);
  std::vector<Vec> h(static_cast<size_t>(n), Vec(static_cast<size_t>(d), 0.0));
  for (int64_t i = 0; i < n; ++i) {
    if (!valid[i]) continue;
    Vec xi(static_cast<size_t>(d_in));
    for (int64_t k = 0; k < d_in; ++k) xi[k] = x.at({b, i, k});
    h[i] = linear_ref(fc_w, fc_b, xi);
    for (double& v : h[i]) v = elu_ref(v);
  }
  std::vector<Vec> q(static_cast<size_t>(n)), kd(static_cast<size_t>(n)), u(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    q[i] = linear_ref(wh, Tensor(), h[i]);
    kd[i] = linear_ref(wd, Tensor(), h[i]);
  }
  for (int64_t i = 0; i < n; ++i) {
    Vec s(static_cast<size_t>(d), 0.0);
    std::vector<int64_t> keys;
    for (int64_t j = 0; j < n; ++j)
      if (valid[i] && valid[j] && zh[i] && zd[j] && direction_allows(dir, i, j)) keys.push_back(j);
    if (!keys.empty()) {
      for (int64_t k = 0; k < d; ++k) {
        Vec e;
        double top = -1e300, total = 0;
        for (int64_t j : keys) e.push_back(c * std::tanh((q[i][k] + kd[j][k] + bias.at({k})) / c));
        for (double v : e) top = std::max(top, v);
        for (double& v : e) total += (v = std::exp(v - top));
        for (size_t t = 0; t < keys.size(); ++t) s[k] += e[t] / total * h[keys[t]][k];
      }
    } else if (keep_unselected && valid[i] && !zh[i]) {
      int count = 0;
      for (int64_t j = 0; j < n; ++j)
        if (j != i && valid[j] && (pool == UnselectedHeadPool::AllTokens || zd[j])) {
          ++count;
          for (int64_t k = 0; k < d; ++k) s[k] += h[j][k];
        }
      if (count > 0)
        for (double& v : s) v /= count;
    }
    Vec hs = h[i];
    hs.insert(hs.end(), s.begin(), s.end());
    Vec f = linear_ref(gw, gb, hs);
    if (gates) {
      gates->emplace_back();
      for (double v : f) gates->back().push_back(sigmoid_ref(v));
    }
    u[i].assign(static_cast<size_t>(d), 0.0);
    const bool keep = valid[i] && (keep_unselected || zh[i]);
    if (keep)
      for (int64_t k = 0; k < d; ++k) {
        double g = sigmoid_ref(f[k]);
        u[i][k] = g * h[i][k] + (1 - g) * s[k];
      }
  }
  return u;
}

// Two-layer source2token over the tokens `t`, positions with readout[i] == 1.
Vec s2t_ref(const Module& m, const std::string& prefix, const std::vector<Vec>& t, const std::vector<int>& readout) {
  Tensor w1 = param(m, prefix + "w1.weight"), b1 = param(m, prefix + "w1.bias");
  Tensor w2 = param(m, prefix + "w2.weight"), b2 = param(m, prefix + "w2.bias");
  const size_t dim = t[0].size();
  std::vector<Vec> scores;
  for (const Vec& ti : t) {
    Vec a = linear_ref(w1, b1, ti);
    for (double& v : a) v = elu_ref(v);
    scores.push_back(linear_ref(w2, b2, a));
  }
  Vec out(dim, 0.0);
  for (size_t k = 0; k < dim; ++k) {
    double top = -1e300, total = 0;
    for (size_t i = 0; i < t.size(); ++i)
      if (readout[i]) top = std::max(top, scores[i][k]);
    for (size_t i = 0; i < t.size(); ++i)
      if (readout[i]) total += std::exp(scores[i][k] - top);
    for (size_t i = 0; i < t.size(); ++i)
      if (readout[i]) out[k] += std::exp(scores[i][k] - top) / total * t[i][k];
  }
  return out;
}

std::vector<int> row_of(const Tensor& m, int64_t b) {
  std::vector<int> r;
  for (int64_t i = 0; i < m.size(1); ++i) r.push_back(m.at({b, i}) != 0);
  return r;
}

// ---------- End-to-end gradchecks ----------

TEST(Resan, GradcheckSelectAllWithPadding) {
  Generator init(1), noise(2);
  Resan model(3, small_options(), init, noise, DType::F64);
  model.set_select_all(true);
  Tensor x = random_input({2, 4, 3}, 3);
  Tensor mask = length_mask({4, 2}, 4);
  // The selection is discrete, so no supervised gradient reaches the RSS.
  expect_gradcheck(model, x, [&] { return flat_outputs(model.encode(x, mask)); }, {"rss"});
}

TEST(Resan, GradcheckThresholdSelectionEveryVariant) {
  for (ResaVariant v : {ResaVariant::Full, ResaVariant::NoUnselectedHeads, ResaVariant::SharedRss}) {
    SCOPED_TRACE(resa_variant_name(v));
    Generator init(4), noise(5);
    Resan model(3, small_options(v), init, noise, DType::F64);
    model.set_training(false);  // rss_eval = threshold: a fixed selection
    Tensor x = random_input({2, 5, 3}, 6);
    Tensor mask = length_mask({5, 3}, 5);
    model.encode(x, mask);
    // The check is only meaningful when heads are both selected and not.
    int selected = 0, dropped = 0;
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t i = 0; i < 5; ++i)
        if (mask.at({b, i}) != 0) (model.last_selection().z_head.at({b, i}) != 0 ? selected : dropped)++;
    ASSERT_GT(selected, 0);
    ASSERT_GT(dropped, 0);
    expect_gradcheck(model, x, [&] { return flat_outputs(model.encode(x, mask)); }, {"rss"});
  }
}

TEST(Rss, LogPiGradcheckForFixedSample) {
  Generator init(7), noise(8);
  Rss rss(3, 4, Activation::Elu, RssEval::Threshold, init, noise, DType::F64);
  Tensor x = random_input({2, 5, 3}, 9);
  Tensor mask = length_mask({5, 3}, 5);
  Tensor z = rss.forward(x, mask).z;  // sampled once (training mode), then held fixed
  expect_gradcheck(rss, x, [&] { return rss_log_prob(rss.logits(x, mask), z, mask); });
}

// Rss::logits splits fc's weight by column blocks; this is the definition it
// must equal: fc over the concatenated [x; mean(x); x * mean(x)] of every
// token, padded tokens included (their x is zeroed first).
TEST(Rss, LogitsEqualFcOverTheConcatenatedFeatures) {
  Generator init(51), noise(52);
  Rss rss(3, 4, Activation::Elu, RssEval::Threshold, init, noise, DType::F64);
  Tensor x = random_input({2, 5, 3}, 53).detach();
  Tensor mask = length_mask({5, 2}, 5);
  auto p = testing_support::params_of(rss);
  Tensor xz = zero_padded(x, mask);
  Tensor xbar = masked_mean_over_tokens(x, mask);
  Tensor features = concat({xz, expand(xbar, x.shape()), xz * xbar}, -1);
  Tensor want = squeeze(linear(activate(Activation::Elu, linear(features, p["fc.weight"], p["fc.bias"])),
                               p["out.weight"], p["out.bias"]),
                        -1);
  // Values are O(1) sums of a few dozen float64 products: 1e-12 is a
  // thousand roundings.
  EXPECT_LT(testing_support::max_abs_diff(rss.logits(x, mask), want), 1e-12);
}

// ---------- Padding, empty sequences ----------

TEST(Resan, PaddedPositionsChangeNoValidOutput) {
  for (ResaVariant v : {ResaVariant::Full, ResaVariant::NoUnselectedHeads, ResaVariant::SharedRss})
    for (bool bidirectional : {true, false}) {
      Generator init(10), noise(11);
      Resan model(3, small_options(v, bidirectional), init, noise, DType::F64);
      model.set_training(false);
      expect_padding_invariant(model, random_input({3, 5, 3}, 12), length_mask({5, 2, 0}, 5));
    }
}

TEST(Resan, EmptySequenceGivesZerosAndFiniteGradients) {
  Generator init(13), noise(14);
  ResanOptions o = small_options();
  o.keep_prob = 0.8;  // training mode: sampling and dropout both active
  Resan model(3, o, init, noise, DType::F64);
  Tensor x = random_input({3, 3, 3}, 15);
  Tensor mask = length_mask({0, 1, 3}, 3);
  EncoderOutput out = model.encode(x, mask);
  for (double v : out.tokens.to_vector()) ASSERT_TRUE(std::isfinite(v));
  for (double v : out.sentence.to_vector()) ASSERT_TRUE(std::isfinite(v));
  for (int64_t k = 0; k < model.sentence_dim(); ++k) EXPECT_EQ(out.sentence.at({0, k}), 0.0);
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t k = 0; k < model.token_dim(); ++k) EXPECT_EQ(out.tokens.at({0, i, k}), 0.0);
  const RssState& s = model.last_selection();
  EXPECT_EQ(s.log_pi.at({0}), 0.0);
  EXPECT_EQ(s.fraction.at({0}), 0.0);
  // Supervised and REINFORCE gradients both stay finite.
  (sum(out.sentence) + sum(s.log_pi)).backward();
  for (const Tensor& p : model.parameters()) {
    if (!p.grad().defined()) continue;
    for (double v : p.grad().to_vector()) ASSERT_TRUE(std::isfinite(v));
  }
  for (double v : x.grad().to_vector()) ASSERT_TRUE(std::isfinite(v));
}

// ---------- Equivalences ----------

// With every token selected, M^rss is the valid off-diagonal mask, so (and-ed
// with the direction mask) each ReSA block is DiSA of that direction with the
// ReSA gate: h = elu(W_h x + b_h), s_i = sum_{j allowed} softmax_j(c tanh((W_head
// h_i + W_dep h_j + b)/c)) h_j, u = F h + (1-F) s with F = sigmoid(W_f[h; s] + b_f);
// the first forward / last backward token has no key and gets s = 0.
TEST(Resan, SelectAllReducesToDirectionalSelfAttentionWithGate) {
  for (bool bidirectional : {true, false}) {
    Generator init(16), noise(17);
    Resan model(3, small_options(ResaVariant::Full, bidirectional), init, noise, DType::F64);
    model.set_select_all(true);  // in training mode too
    Tensor x = random_input({2, 5, 3}, 18).detach();
    Tensor mask = length_mask({5, 3}, 5);
    EncoderOutput out = model.encode(x, mask);
    for (int64_t b = 0; b < 2; ++b) {
      std::vector<int> valid = row_of(mask, b);
      std::vector<Vec> tokens;
      if (bidirectional) {
        std::vector<Vec> fw = resa_ref(model, "fw.", x, b, valid, valid, valid, Direction::Forward, true);
        std::vector<Vec> bw = resa_ref(model, "bw.", x, b, valid, valid, valid, Direction::Backward, true);
        for (size_t i = 0; i < fw.size(); ++i) {
          tokens.push_back(fw[i]);
          tokens.back().insert(tokens.back().end(), bw[i].begin(), bw[i].end());
        }
      } else {
        tokens = resa_ref(model, "resa.", x, b, valid, valid, valid, Direction::None, true);
      }
      for (int64_t i = 0; i < 5; ++i)
        for (int64_t k = 0; k < model.token_dim(); ++k)
          EXPECT_NEAR(out.tokens.at({b, i, k}), tokens[i][k], 1e-12) << "example " << b << " token " << i;
      Vec sentence = s2t_ref(model, "s2t.", tokens, valid);
      for (int64_t k = 0; k < model.sentence_dim(); ++k) EXPECT_NEAR(out.sentence.at({b, k}), sentence[k], 1e-12);
      EXPECT_EQ(model.last_selection().fraction.at({b}), 2.0);  // both RSS select every token: 1 + 1
    }
  }
}

// A hand-picked selection through one ReSA block, every direction, with and
// without the unselected-head fallback, against the loop computation.
TEST(Resa, GivenSelectionMatchesLoopComputation) {
  for (UnselectedHeadPool pool : {UnselectedHeadPool::AllTokens, UnselectedHeadPool::SelectedDependents})
  for (Direction dir : {Direction::None, Direction::Forward, Direction::Backward})
    for (bool keep : {true, false}) {
      Generator init(19), noise(20);
      ResaOptions o;
      o.direction = dir;
      o.keep_unselected = keep;
      o.pool = pool;
      o.activation = Activation::Elu;
      Resa resa(3, 4, o, init, noise, DType::F64);
      Tensor x = random_input({2, 5, 3}, 21).detach();
      Tensor mask = length_mask({5, 4}, 5);
      Tensor zh = u8({1, 0, 1, 0, 1, 0, 0, 1, 1, 1}, {2, 5});
      Tensor zd = u8({0, 1, 1, 0, 1, 1, 0, 0, 0, 1}, {2, 5});
      Tensor u = resa.forward(x, mask, zh, zd);
      for (int64_t b = 0; b < 2; ++b) {
        std::vector<Vec> ref =
            resa_ref(resa, "", x, b, row_of(mask, b), row_of(zh, b), row_of(zd, b), dir, keep, 5.0, pool);
        for (int64_t i = 0; i < 5; ++i)
          for (int64_t k = 0; k < 4; ++k)
            EXPECT_NEAR(u.at({b, i, k}), ref[i][k], 1e-12)
                << direction_name(dir) << " keep " << keep << " example " << b << " token " << i;
      }
    }
}

// ReSA with everything selected is the project's DiSA once DiSA's gate
// weights are the two halves of ReSA's concatenated gate.
TEST(Resa, SelectAllEqualsDisaWithCopiedWeights) {
  for (Direction dir : {Direction::Forward, Direction::Backward, Direction::None}) {
    Generator init(22), noise(23);
    ResaOptions ro;
    ro.direction = dir;
    Resa resa(3, 4, ro, init, noise, DType::F64);
    DisaOptions dopt;
    dopt.direction = dir;
    Disa disa(3, 4, dopt, init, DType::F64);
    auto copy = [&](const std::string& to, const Tensor& from) { copy_into(param(disa, to), from); };
    Tensor gw = param(resa, "gate.proj.weight");
    copy("fc.weight", param(resa, "fc.weight"));
    copy("fc.bias", param(resa, "fc.bias"));
    copy("w1.weight", param(resa, "w_head.weight"));
    copy("w2.weight", param(resa, "w_dep.weight"));
    copy("bias", param(resa, "bias"));
    copy("fusion.w1.weight", narrow(gw, 1, 4, 4));  // DiSA's W_f1 multiplies s
    copy("fusion.w2.weight", narrow(gw, 1, 0, 4));  // and W_f2 multiplies h
    copy("fusion.bias", param(resa, "gate.proj.bias"));
    Tensor x = random_input({2, 5, 3}, 24).detach();
    Tensor mask = length_mask({5, 2}, 5);
    std::vector<double> a = resa.forward(x, mask, mask, mask).to_vector();
    std::vector<double> b = disa.forward(x, mask).to_vector();
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-12) << direction_name(dir);
  }
}

// Example 0: head 0 selected (row 0 stays 0); heads 1 and 2 unselected;
// token 3 padded; dependents 0, 1 and the padded 3. Example 1: two valid
// tokens, neither a selected head; only token 0 is a selected dependent.
struct HandSelection {
  Tensor h = from_vector({1, 2, 3, 4, 5, 6, 70, 80,  //
                          9, 8, 7, 6, 5, 4, 3, 2},
                         {2, 4, 2}, DType::F64);
  Tensor valid = u8({1, 1, 1, 0, 1, 1, 0, 0}, {2, 4});
  Tensor zh = u8({1, 0, 0, 0, 0, 0, 0, 0}, {2, 4});
  Tensor zd = u8({1, 1, 0, 1, 1, 0, 0, 0}, {2, 4});
};

TEST(Resa, UnselectedHeadFallbackOnHandExample) {
  const HandSelection e;
  Tensor c = unselected_head_context(e.h, e.valid, e.zh, e.zd, UnselectedHeadPool::SelectedDependents);
  std::vector<double> expected = {0, 0,    // selected head
                                  1, 2,    // head 1: dependent 0 only (1 is itself, 3 is padding)
                                  2, 3,    // head 2: mean of dependents 0 and 1
                                  0, 0,    // padded
                                  0, 0,    // head 0: its only dependent is itself
                                  9, 8,    // head 1: dependent 0
                                  0, 0, 0, 0};
  EXPECT_EQ(c.to_vector(), expected);
}

TEST(Resa, UnselectedHeadPoolsOverEveryValidTokenByDefault) {
  // Seed 004 Sec. 3.2: an unselected head's scores are all -inf, "which leads
  // to the equal probabilities ... mean-pooling over all dependent tokens":
  // every valid token j != i, whatever the dependent RSS chose.
  const HandSelection e;
  std::vector<double> expected = {0, 0,    // selected head
                                  3, 4,    // head 1: tokens 0 and 2 (3 is padding)
                                  2, 3,    // head 2: tokens 0 and 1
                                  0, 0,    // padded
                                  7, 6,    // head 0: token 1 (not a selected dependent)
                                  9, 8,    // head 1: token 0
                                  0, 0, 0, 0};
  EXPECT_EQ(unselected_head_context(e.h, e.valid, e.zh, e.zd).to_vector(), expected);
  EXPECT_EQ(unselected_head_context(e.h, e.valid, e.zh, e.zd, UnselectedHeadPool::AllTokens).to_vector(), expected);
  EXPECT_EQ(unselected_head_pool_from_name("all_tokens"), UnselectedHeadPool::AllTokens);
  EXPECT_EQ(unselected_head_pool_from_name("selected_dependents"), UnselectedHeadPool::SelectedDependents);
  EXPECT_THROW(unselected_head_pool_from_name("mean"), Error);
}

TEST(Resan, DefaultsFollowThePaper) {
  const ResanOptions o;
  EXPECT_EQ(o.activation, Activation::Relu);  // "We use ReLU for all unspecified activation functions"
  EXPECT_EQ(o.pool, UnselectedHeadPool::AllTokens);
}

// Fig. 3: with a trace attached, each block records its gate F of Eq. 14
// per token and feature, the loop computation's sigmoid(W_f [h; s] + b_f).
TEST(Resa, RecordsTheFusionGateForFig3) {
  Generator init(60), noise(61);
  ResaOptions o;
  o.direction = Direction::Forward;
  o.activation = Activation::Elu;
  Resa resa(3, 4, o, init, noise, DType::F64);
  Tensor x = random_input({2, 5, 3}, 62).detach();
  Tensor mask = length_mask({5, 3}, 5);
  Tensor zh = u8({1, 0, 1, 1, 1, 0, 1, 1, 0, 0}, {2, 5});
  Tensor zd = u8({1, 1, 0, 1, 1, 1, 1, 0, 0, 0}, {2, 5});
  AttentionTrace trace;
  {
    AttachAttentionTrace attach(trace);
    resa.forward(x, mask, zh, zd);
  }
  const Tensor& f = trace.get("forward.fusion_gate");
  ASSERT_EQ(f.shape(), (Shape{2, 5, 4}));
  for (int64_t b = 0; b < 2; ++b) {
    std::vector<Vec> gates;
    resa_ref(resa, "", x, b, row_of(mask, b), row_of(zh, b), row_of(zd, b), Direction::Forward, true, 5.0,
             UnselectedHeadPool::AllTokens, &gates);
    for (int64_t i = 0; i < 5; ++i) {
      if (mask.at({b, i}) == 0) continue;
      for (int64_t k = 0; k < 4; ++k) EXPECT_NEAR(f.at({b, i, k}), gates[i][k], 1e-12) << b << " " << i << " " << k;
    }
  }
}

// `attn explain` draws Fig. 3's gate per block beside the soft alignments,
// and a variant without attention weights gives a picture without them.
TEST(Resan, ExplainPictureShowsTheFusionGates) {
  for (ResaVariant v : {ResaVariant::Full, ResaVariant::NoAttentions}) {
    Generator init(63), noise(64);
    Resan model(3, small_options(v), init, noise, DType::F64);
    model.set_training(false);
    Explanation e;
    e.encoder = "resan";
    e.tokens = {"a", "group", "of", "adults", "waits"};
    e.original_length = 5;
    e.labels = {"no", "yes"};
    e.probabilities = {0.4, 0.6};
    e.predicted = 1;
    {
      AttachAttentionTrace attach(e.trace);
      model.encode(random_input({1, 5, 3}, 65).detach(), length_mask({5}, 5));
    }
    for (double z : model.last_selection().z_head.to_vector()) e.heads.push_back(z != 0);
    for (double z : model.last_selection().z_dep.to_vector()) e.dependents.push_back(z != 0);
    const std::string svg = render_explanation_svg(e, ExplainPictureOptions{});
    const bool full = v == ResaVariant::Full;
    EXPECT_EQ(svg.find("forward fusion gate F") != std::string::npos, full) << resa_variant_name(v);
    EXPECT_EQ(svg.find("backward fusion gate F") != std::string::npos, full) << resa_variant_name(v);
    EXPECT_EQ(svg.find("source2token weights") != std::string::npos, full) << resa_variant_name(v);
  }
}

// ---------- Sampling ----------

// Fixes every probability at p by zeroing w and setting b'.
void set_constant_logit(const Rss& rss, double logit) {
  fill_(param(rss, "out.weight"), 0.0);
  fill_(param(rss, "out.bias"), logit);
}

TEST(Rss, SampledRateMatchesProbabilityAndSkipsPadding) {
  Generator init(25), noise(26);
  Rss rss(3, 4, Activation::Elu, RssEval::Threshold, init, noise, DType::F64);
  std::vector<int64_t> lengths;
  for (int64_t b = 0; b < 64; ++b) lengths.push_back(10 + (b * 7) % 55);
  Tensor mask = length_mask(lengths, 64);
  Tensor x = random_input({64, 64, 3}, 27).detach();
  for (double p : {0.3, 0.8}) {
    set_constant_logit(rss, std::log(p / (1 - p)));
    RssSample s = rss.forward(x, mask);
    double chosen = 0, total = 0;
    for (int64_t b = 0; b < 64; ++b)
      for (int64_t i = 0; i < 64; ++i) {
        if (mask.at({b, i}) == 0) continue;
        chosen += s.z.at({b, i});
        total += 1;
      }
    // About 2600 draws: the standard error is below 0.01.
    EXPECT_NEAR(chosen / total, p, 0.035);
  }
  for (double logit : {40.0, -40.0}) {
    set_constant_logit(rss, logit);
    Tensor z = rss.forward(x, mask).z;
    for (int64_t b = 0; b < 64; ++b)
      for (int64_t i = 0; i < 64; ++i)
        ASSERT_EQ(z.at({b, i}), logit > 0 ? mask.at({b, i}) : 0.0) << "padded tokens are never selected";
  }
}

TEST(Rss, SameSeedSameSelection) {
  Tensor x = random_input({8, 20, 3}, 28).detach();
  Tensor mask = length_mask({20, 5, 17, 20, 1, 9, 20, 13}, 20);
  auto draw = [&](uint64_t noise_seed) {
    Generator init(29), noise(noise_seed);
    Rss rss(3, 4, Activation::Elu, RssEval::Threshold, init, noise, DType::F64);
    set_constant_logit(rss, 0.0);  // p = 1/2 everywhere: the most random
    return rss.forward(x, mask).z.to_vector();
  };
  EXPECT_EQ(draw(30), draw(30));
  EXPECT_NE(draw(30), draw(31));
}

TEST(Rss, EvaluationThresholdsOrSamples) {
  Generator init(32), noise(33);
  Rss rss(3, 4, Activation::Elu, RssEval::Threshold, init, noise, DType::F64);
  rss.set_training(false);
  Tensor x = random_input({4, 6, 3}, 34).detach();
  Tensor mask = length_mask({6, 4, 1, 0}, 6);
  RssSample s = rss.forward(x, mask);
  for (int64_t b = 0; b < 4; ++b)
    for (int64_t i = 0; i < 6; ++i)
      EXPECT_EQ(s.z.at({b, i}), mask.at({b, i}) != 0 && s.logits.at({b, i}) >= 0 ? 1.0 : 0.0);
  EXPECT_EQ(rss.forward(x, mask).z.to_vector(), s.z.to_vector());

  Generator init2(32), noise2(35);
  Rss sampler(3, 4, Activation::Elu, RssEval::Sample, init2, noise2, DType::F64);
  sampler.set_training(false);
  set_constant_logit(sampler, 0.0);
  Tensor big = random_input({8, 20, 3}, 36).detach();
  Tensor full_mask = length_mask(std::vector<int64_t>(8, 20), 20);
  EXPECT_NE(sampler.forward(big, full_mask).z.to_vector(), sampler.forward(big, full_mask).z.to_vector());
}

// ---------- log pi ----------

double log_sigmoid_ref(double a) { return a < 0 ? a - std::log1p(std::exp(a)) : -std::log1p(std::exp(-a)); }

TEST(Rss, LogPiMatchesHandComputation) {
  Tensor a = from_vector({0.5, -1, 2, 9, -800, 800, 0.3, 0}, {2, 4}, DType::F64);
  Tensor valid = u8({1, 1, 1, 0, 1, 1, 1, 1}, {2, 4});
  Tensor z = u8({1, 0, 0, 0, 1, 0, 1, 0}, {2, 4});
  Tensor lp = rss_log_prob(a, z, valid);
  // log p = log sigmoid(a) for z = 1, log(1 - p) = log sigmoid(-a) for z = 0; padding skipped.
  const double ex0 = std::log(1 / (1 + std::exp(-0.5))) + std::log(1 - 1 / (1 + std::exp(1.0))) +
                     std::log(1 - 1 / (1 + std::exp(-2.0)));
  const double ex1 = -800.0 + -800.0 + std::log(1 / (1 + std::exp(-0.3))) + std::log(0.5);
  EXPECT_NEAR(lp.at({0}), ex0, 1e-12);
  EXPECT_NEAR(lp.at({1}), ex1, 1e-9);
  EXPECT_TRUE(std::isfinite(lp.at({1})));

  // Through the module: the same formula on its own logits and sample.
  Generator init(37), noise(38);
  Rss rss(3, 4, Activation::Elu, RssEval::Threshold, init, noise, DType::F64);
  Tensor x = random_input({2, 5, 3}, 39).detach();
  Tensor mask = length_mask({5, 2}, 5);
  RssSample s = rss.forward(x, mask);
  for (int64_t b = 0; b < 2; ++b) {
    double expected = 0, chosen = 0, count = 0;
    for (int64_t i = 0; i < 5; ++i) {
      if (mask.at({b, i}) == 0) continue;
      const double logit = s.logits.at({b, i});
      expected += s.z.at({b, i}) != 0 ? log_sigmoid_ref(logit) : log_sigmoid_ref(-logit);
      chosen += s.z.at({b, i});
      count += 1;
    }
    EXPECT_NEAR(s.log_pi.at({b}), expected, 1e-12);
    EXPECT_DOUBLE_EQ(s.fraction.at({b}), chosen / count);
  }
}

// ---------- The ReSAN encoder's interface ----------

TEST(Resan, ParametersSplitIntoRssAndRest) {
  for (ResaVariant v : {ResaVariant::Full, ResaVariant::SharedRss}) {
    Generator init(40), noise(41);
    Resan model(3, small_options(v), init, noise, DType::F64);
    auto rss = model.named_rss_parameters();
    auto rest = model.named_main_parameters();
    EXPECT_EQ(rss.size() + rest.size(), model.named_parameters().size());
    EXPECT_EQ(model.rss_parameters().size(), rss.size());
    EXPECT_EQ(model.main_parameters().size(), rest.size());
    std::map<std::string, int> seen;
    for (const auto& [name, p] : rss) {
      EXPECT_EQ(name.rfind(v == ResaVariant::SharedRss ? "rss." : "rss_", 0), 0u) << name;
      seen[name]++;
    }
    for (const auto& [name, p] : rest) {
      EXPECT_NE(name.rfind("rss", 0), 0u) << name;
      seen[name]++;
    }
    for (const auto& [name, count] : seen) EXPECT_EQ(count, 1) << name;
    // Two RSS of fc (9x3 + 3) and out (3 + 1), or one when shared.
    EXPECT_EQ(rss.size(), v == ResaVariant::SharedRss ? 4u : 8u);
    for (const char* name : {"fw.fc.weight", "fw.w_head.weight", "fw.w_dep.weight", "fw.bias", "fw.gate.proj.weight",
                             "bw.gate.proj.bias", "s2t.w1.weight", "s2t.w2.bias"})
      EXPECT_EQ(seen.count(name), 1u) << name;
  }
}

TEST(Resan, LastSelectionReportsWhatWasChosen) {
  for (ResaVariant v : {ResaVariant::Full, ResaVariant::SharedRss}) {
    Generator init(42), noise(43);
    Resan model(3, small_options(v), init, noise, DType::F64);
    Tensor x = random_input({3, 6, 3}, 44).detach();
    Tensor mask = length_mask({6, 4, 2}, 6);
    model.encode(x, mask);  // training mode: sampled
    const RssState& s = model.last_selection();
    ASSERT_EQ(s.z_head.dtype(), DType::U8);
    ASSERT_EQ(s.z_head.shape(), (Shape{3, 6}));
    ASSERT_EQ(s.z_dep.shape(), (Shape{3, 6}));
    ASSERT_EQ(s.log_pi.shape(), (Shape{3}));
    ASSERT_EQ(s.fraction.shape(), (Shape{3}));
    EXPECT_TRUE(s.log_pi.requires_grad());
    for (int64_t b = 0; b < 3; ++b) {
      double heads = 0, deps = 0, len = 0;
      for (int64_t i = 0; i < 6; ++i) {
        if (mask.at({b, i}) == 0) {
          EXPECT_EQ(s.z_head.at({b, i}), 0.0);
          EXPECT_EQ(s.z_dep.at({b, i}), 0.0);
        }
        heads += s.z_head.at({b, i});
        deps += s.z_dep.at({b, i});
        len += mask.at({b, i});
      }
      EXPECT_DOUBLE_EQ(s.fraction_head.at({b}), heads / len);
      EXPECT_DOUBLE_EQ(s.fraction_dep.at({b}), deps / len);
      // Eq. 17's sum of z over len(x), both RSS modules counted (not their mean).
      EXPECT_DOUBLE_EQ(s.fraction.at({b}), v == ResaVariant::SharedRss ? heads / len : (heads + deps) / len);
      EXPECT_LT(s.log_pi.at({b}), 0.0);
    }
    if (v == ResaVariant::SharedRss) {
      EXPECT_EQ(s.z_head.to_vector(), s.z_dep.to_vector());
    }
    model.set_select_all(true);
    EXPECT_TRUE(model.select_all());
    model.encode(x, mask);
    EXPECT_EQ(model.last_selection().z_head.to_vector(), mask.to_vector());
    EXPECT_EQ(model.last_selection().z_dep.to_vector(), mask.to_vector());
  }
}

TEST(Resan, DroppedHeadsOutputZerosInTheVariants) {
  for (ResaVariant v : {ResaVariant::NoUnselectedHeads, ResaVariant::SharedRss}) {
    Generator init(45), noise(46);
    Resan model(3, small_options(v), init, noise, DType::F64);
    Tensor x = random_input({2, 6, 3}, 47).detach();
    Tensor mask = length_mask({6, 4}, 6);
    EncoderOutput out = model.encode(x, mask);
    int dropped = 0;
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t i = 0; i < 6; ++i) {
        if (mask.at({b, i}) == 0 || model.last_selection().z_head.at({b, i}) != 0) continue;
        ++dropped;
        for (int64_t k = 0; k < model.token_dim(); ++k) EXPECT_EQ(out.tokens.at({b, i, k}), 0.0);
      }
    EXPECT_GT(dropped, 0);
  }
}

TEST(Resan, BuilderReadsConfig) {
  SeededEncoderContext ctx(3, 48, 49);
  Config c = Config::parse("hidden = 5\nresa_direction = none\nresa_variant = shared_rss\nrss_eval = sample\n");
  std::unique_ptr<Encoder> e = build_resan_encoder(c, ctx);
  c.check_all_used("resan");
  EXPECT_EQ(e->token_dim(), 5);
  EXPECT_EQ(e->sentence_dim(), 5);
  auto& model = static_cast<Resan&>(*e);
  EXPECT_EQ(model.options().rss_hidden, 5);  // defaults to hidden
  EXPECT_EQ(model.options().rss_eval, RssEval::Sample);
  EXPECT_EQ(param(model, "rss.fc.weight").shape(), (Shape{5, 9}));
  EXPECT_EQ(param(model, "resa.fc.weight").shape(), (Shape{5, 3}));

  std::unique_ptr<Encoder> d = build_resan_encoder(Config(), ctx);
  auto& paper = static_cast<Resan&>(*d);
  EXPECT_EQ(paper.token_dim(), 600);
  EXPECT_EQ(paper.options().rss_eval, RssEval::Threshold);
  EXPECT_EQ(paper.options().variant, ResaVariant::Full);
  EXPECT_EQ(paper.options().keep_prob, 0.75);
  EXPECT_EQ(param(paper, "rss_dep.fc.weight").shape(), (Shape{300, 9}));
}

TEST(Resan, ConfigAndShapeErrors) {
  SeededEncoderContext ctx(3, 50, 51);
  auto build = [&](const std::string& text) { build_resan_encoder(Config::parse(text), ctx); };
  EXPECT_THAT(error_of([&] { build("rss_eval = argmax\n"); }),
              HasSubstr("key 'rss_eval' of resan must be one of threshold, sample, got 'argmax'"));
  EXPECT_THAT(error_of([&] { build("resa_variant = tiny\n"); }),
              HasSubstr("key 'resa_variant' of resan must be one of full, no_unselected_heads, shared_rss, "
                        "no_hard_attention, no_soft_self_attention, no_attentions, got 'tiny'"));
  EXPECT_THAT(error_of([&] { build("rss_kind = lstm\n"); }),
              HasSubstr("key 'rss_kind' of resan must be one of parallel, iterative, got 'lstm'"));
  EXPECT_THAT(error_of([&] { build("resa_direction = fw\n"); }),
              HasSubstr("key 'resa_direction' of resan must be one of both, none, got 'fw'"));
  EXPECT_THAT(error_of([&] { build("hidden = 4\nscale_c = 0\n"); }),
              HasSubstr("key 'scale_c' of resan must lie in (0, 1000000], got '0'"));

  Resan model(3, small_options(), ctx.init_gen, ctx.noise_gen, DType::F64);
  Tensor mask = length_mask({4, 2}, 4);
  EXPECT_THAT(error_of([&] { model.encode(zeros({2, 4, 5}, DType::F64), mask); }),
              HasSubstr("resan: expects x of shape [B, n, 3], got [2, 4, 5]"));
  EXPECT_THAT(error_of([&] { model.encode(zeros({2, 4, 3}, DType::F64), length_mask({4}, 4)); }),
              HasSubstr("resan: mask must be uint8 [2, 4], got uint8 [1, 4]"));
  ResaOptions ro;
  Resa resa(3, 4, ro, ctx.init_gen, ctx.noise_gen, DType::F64);
  EXPECT_THAT(error_of([&] { resa.forward(zeros({2, 4, 3}, DType::F64), mask, mask, zeros({2, 4}, DType::F64)); }),
              HasSubstr("z_dep must be uint8 [2, 4], got float64 [2, 4]"));
  EXPECT_THAT(error_of([&] { rss_log_prob(zeros({2, 4}, DType::F64), length_mask({4, 2, 1}, 4), mask); }),
              HasSubstr("rss_log_prob: selection z must be uint8 [2, 4], got uint8 [3, 4]"));
}

}  // namespace
}  // namespace attn
