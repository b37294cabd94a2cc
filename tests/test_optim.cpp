// Optimisers (SGD with momentum, Adam, Adadelta) against updates computed by
// hand in plain doubles; disjoint parameter groups, gradient clipping,
// optimiser state round trips and the scope of L2 weight decay.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "test_util.h"
#include "attn/engine/error.h"
#include "attn/nn/embedding.h"
#include "attn/nn/layer_norm.h"
#include "attn/nn/linear.h"
#include "attn/ops/binary/binary.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/train/optim/adadelta.h"
#include "attn/train/optim/adam.h"
#include "attn/train/optim/optimizer.h"
#include "attn/train/optim/sgd.h"
#include "attn/train/optim/weight_decay.h"

namespace attn {
namespace {

using namespace testing_support;

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// The tiny problem: loss = sum(a * p^2) with a = {1, 3}, so grad = 2 a p.
const std::vector<double> kA = {1.0, 3.0};
const std::vector<double> kP0 = {0.5, -1.5};

void backward_tiny_loss(const Tensor& p) {
  Tensor a = from_vector(kA, {2}, p.dtype());
  sum(mul(a, mul(p, p))).backward();
}

std::vector<double> tiny_grad(const std::vector<double>& p) { return {2 * kA[0] * p[0], 2 * kA[1] * p[1]}; }

// Runs `steps` optimiser steps on the tiny problem; returns p after each.
std::vector<std::vector<double>> run_tiny(Optimizer& opt, const Tensor& p, int steps) {
  std::vector<std::vector<double>> out;
  for (int s = 0; s < steps; ++s) {
    opt.zero_grad();
    backward_tiny_loss(p);
    opt.step();
    out.push_back(p.to_vector());
  }
  return out;
}

void expect_near_vec(const std::vector<double>& got, const std::vector<double>& want, double tol, int step) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "step " << step << " element " << i;
}

Tensor param(const std::vector<double>& v, DType dtype = DType::F64) {
  Tensor p = from_vector(v, {static_cast<int64_t>(v.size())}, dtype);
  p.set_requires_grad();
  return p;
}

TEST(Optim, SgdMomentumMatchesHandComputedSteps) {
  const double lr = 0.1, mom = 0.9;
  Tensor p = param(kP0);
  Sgd sgd({p}, lr, mom);
  std::vector<std::vector<double>> got = run_tiny(sgd, p, 3);
  std::vector<double> x = kP0, v = {0, 0};
  for (int s = 0; s < 3; ++s) {
    std::vector<double> g = tiny_grad(x);
    for (int i = 0; i < 2; ++i) {
      v[i] = mom * v[i] + g[i];
      x[i] -= lr * v[i];
    }
    expect_near_vec(got[s], x, 1e-12, s);
  }
  // Step 1 by hand: g = {1, -9}, v = g, p = {0.5 - 0.1, -1.5 + 0.9}.
  EXPECT_NEAR(got[0][0], 0.4, 1e-12);
  EXPECT_NEAR(got[0][1], -0.6, 1e-12);
}

TEST(Optim, SgdWithoutMomentumIsPlainGradientDescent) {
  Tensor p = param(kP0);
  Sgd sgd({p}, 0.1);
  std::vector<std::vector<double>> got = run_tiny(sgd, p, 2);
  // p1 = {0.4, -0.6}; g = {0.8, -3.6}; p2 = {0.32, -0.24}.
  expect_near_vec(got[1], {0.32, -0.24}, 1e-12, 1);
  EXPECT_TRUE(sgd.state().size() == 2u);  // "step" and "0.step": no velocity slot
}

std::vector<std::vector<double>> adam_reference(double lr, double b1, double b2, double eps, int steps) {
  std::vector<std::vector<double>> out;
  std::vector<double> x = kP0, m = {0, 0}, v = {0, 0};
  for (int t = 1; t <= steps; ++t) {
    std::vector<double> g = tiny_grad(x);
    for (int i = 0; i < 2; ++i) {
      m[i] = b1 * m[i] + (1 - b1) * g[i];
      v[i] = b2 * v[i] + (1 - b2) * g[i] * g[i];
      const double mhat = m[i] / (1 - std::pow(b1, t)), vhat = v[i] / (1 - std::pow(b2, t));
      x[i] -= lr * mhat / (std::sqrt(vhat) + eps);
    }
    out.push_back(x);
  }
  return out;
}

TEST(Optim, AdamMatchesHandComputedSteps) {
  AdamOptions o;
  EXPECT_EQ(o.lr, 1e-3);
  EXPECT_EQ(o.beta1, 0.9);
  EXPECT_EQ(o.beta2, 0.999);
  EXPECT_EQ(o.eps, 1e-8);
  o.lr = 0.1;
  Tensor p = param(kP0);
  Adam adam({p}, o);
  std::vector<std::vector<double>> got = run_tiny(adam, p, 3);
  std::vector<std::vector<double>> want = adam_reference(0.1, 0.9, 0.999, 1e-8, 3);
  for (int s = 0; s < 3; ++s) expect_near_vec(got[s], want[s], 1e-12, s);
  // The first bias-corrected Adam step moves each coordinate by lr * sign(g).
  EXPECT_NEAR(got[0][0], 0.5 - 0.1, 1e-8);
  EXPECT_NEAR(got[0][1], -1.5 + 0.1, 1e-8);
}

TEST(Optim, AdadeltaMatchesHandComputedSteps) {
  AdadeltaOptions o;
  EXPECT_EQ(o.lr, 0.5);
  EXPECT_EQ(o.rho, 0.95);
  EXPECT_EQ(o.eps, 1e-8);
  o.eps = 1e-6;  // larger than the default so the first steps are not vanishingly small
  Tensor p = param(kP0);
  Adadelta ada({p}, o);
  std::vector<std::vector<double>> got = run_tiny(ada, p, 3);
  std::vector<double> x = kP0, acc = {0, 0}, acc_upd = {0, 0};
  for (int s = 0; s < 3; ++s) {
    std::vector<double> g = tiny_grad(x);
    for (int i = 0; i < 2; ++i) {
      acc[i] = 0.95 * acc[i] + 0.05 * g[i] * g[i];
      const double upd = std::sqrt(acc_upd[i] + 1e-6) / std::sqrt(acc[i] + 1e-6) * g[i];
      acc_upd[i] = 0.95 * acc_upd[i] + 0.05 * upd * upd;
      x[i] -= 0.5 * upd;
    }
    expect_near_vec(got[s], x, 1e-12, s);
  }
  // Step 1 by hand for p0: g = 1, accum = 0.05, update = 1e-3 / sqrt(0.050001).
  EXPECT_NEAR(got[0][0], 0.5 - 0.5 * 1e-3 / std::sqrt(0.050001), 1e-12);
}

TEST(Optim, Float32ParametersAreUpdatedInFloat32) {
  AdamOptions o;
  o.lr = 0.1;
  Tensor p = param(kP0, DType::F32);
  Adam adam({p}, o);
  std::vector<std::vector<double>> got = run_tiny(adam, p, 3);
  std::vector<std::vector<double>> want = adam_reference(0.1, 0.9, 0.999, 1e-8, 3);
  for (int s = 0; s < 3; ++s) expect_near_vec(got[s], want[s], 1e-5, s);
  EXPECT_EQ(p.dtype(), DType::F32);
  for (const auto& kv : adam.state())
    if (kv.first != "step" && kv.first != "0.step") {
      EXPECT_EQ(kv.second.dtype(), DType::F32) << kv.first;
    }

  Tensor q = param(kP0, DType::F32);
  Adadelta ada({q});
  run_tiny(ada, q, 2);
  Tensor r = param(kP0, DType::F32);
  Sgd sgd({r}, 0.1, 0.9);
  std::vector<std::vector<double>> s = run_tiny(sgd, r, 1);
  expect_near_vec(s[0], {0.4, -0.6}, 1e-6, 0);
  EXPECT_EQ(q.dtype(), DType::F32);
}

TEST(Optim, UpdatesInPlaceKeepingTheParameterHandle) {
  Tensor p = param(kP0);
  const TensorImpl* impl = p.impl();
  const void* data = p.raw_data();
  Adam adam({p});
  run_tiny(adam, p, 2);
  EXPECT_EQ(adam.params()[0].impl(), impl);
  EXPECT_EQ(p.raw_data(), data);
  EXPECT_NE(p.to_vector(), kP0);
}

TEST(Optim, ParametersWithoutGradientAreLeftAloneAndKeepTheirOwnStepCount) {
  Tensor a = param({1.0}), b = param({2.0});
  AdamOptions o;
  o.lr = 0.1;
  Adam adam({a, b}, o);
  for (int s = 0; s < 2; ++s) {
    adam.zero_grad();
    sum(mul(a, a)).backward();  // b gets no gradient
    adam.step();
  }
  EXPECT_EQ(b.to_vector(), std::vector<double>{2.0});
  adam.zero_grad();
  sum(mul(b, b)).backward();
  adam.step();
  // b's first update: bias correction with t = 1 gives exactly lr * sign(g).
  EXPECT_NEAR(b.item(), 2.0 - 0.1, 1e-8);
  EXPECT_EQ(adam.step_count(), 3);
}

TEST(Optim, DisjointOptimisersEachUpdateOnlyTheirOwnParameters) {
  Tensor a = param({1.0, 2.0}), b = param({3.0});
  Sgd first({a}, 0.1);
  Adam second({b});
  auto loss = [&] { add(sum(mul(a, a)), sum(mul(b, b))).backward(); };
  loss();
  first.step();
  EXPECT_NE(a.to_vector(), (std::vector<double>{1.0, 2.0}));
  EXPECT_EQ(b.to_vector(), std::vector<double>{3.0});
  const std::vector<double> a_after = a.to_vector();
  second.step();
  EXPECT_EQ(a.to_vector(), a_after);
  EXPECT_NE(b.to_vector(), std::vector<double>{3.0});

}

TEST(Optim, OverlappingParameterGroupsAreRejected) {
  Tensor a = param({1.0}), b = param({2.0});
  Sgd first({a}, 0.1);
  Adam second({b, a});
  EXPECT_THAT(error_of([&] { check_disjoint({&first, &second}); }),
              HasSubstr("parameter 0 of optimiser 0 (Sgd) is also parameter 1 of optimiser 1 (Adam)"));
  EXPECT_THAT(error_of([&] { check_disjoint({&first, &second}); }), HasSubstr("parameter groups must be disjoint"));
  EXPECT_THAT(error_of([&] { check_disjoint({&first, &first}); }), HasSubstr("given twice"));
  EXPECT_THAT(error_of([&] { Sgd dup({a, a}, 0.1); }), HasSubstr("listed twice"));
  Tensor not_param = from_vector({1.0}, {1}, DType::F64);
  EXPECT_THAT(error_of([&] { Sgd s({not_param}, 0.1); }), HasSubstr("must be a leaf that requires grad"));
}

TEST(Optim, SplitParametersByNamePredicate) {
  Tensor a = param({1.0}), b = param({2.0}), c = param({3.0});
  NamedTensors named = {{"encoder.rss_head.fc.weight", a}, {"encoder.fw.fc.weight", b}, {"encoder.rss_dep.out.bias", c}};
  ParameterSplit split =
      split_parameters(named, [](const std::string& n) { return n.find(".rss_") != std::string::npos; });
  ASSERT_EQ(split.selected.size(), 2u);
  ASSERT_EQ(split.rest.size(), 1u);
  EXPECT_EQ(split.selected[0].first, "encoder.rss_head.fc.weight");
  EXPECT_EQ(split.selected[1].first, "encoder.rss_dep.out.bias");
  EXPECT_EQ(split.rest[0].first, "encoder.fw.fc.weight");
  std::vector<Tensor> t = tensors_of(split.selected);
  EXPECT_EQ(t[1].impl(), c.impl());
  // The two halves make two optimisers that coexist.
  Adadelta rss(tensors_of(split.selected));
  Adam rest(tensors_of(split.rest));
  EXPECT_NO_THROW(check_disjoint({&rss, &rest}));
}

TEST(Optim, ClipGradNormScalesToTheMaxNormAndReturnsTheOldNorm) {
  Tensor a = param({0.0, 0.0}), b = param({0.0}), none = param({5.0});
  Tensor ga = from_vector({3.0, 4.0}, {2}, DType::F64), gb = from_vector({12.0}, {1}, DType::F64);
  a.set_grad(ga);
  b.set_grad(gb);
  EXPECT_NEAR(clip_grad_norm({a, b, none}, 6.5), 13.0, 1e-12);
  EXPECT_THAT(a.grad().to_vector(), ElementsAre(1.5, 2.0));
  EXPECT_THAT(b.grad().to_vector(), ElementsAre(6.0));
  // The old gradient tensors were replaced, not modified (the tape may hold them).
  EXPECT_THAT(ga.to_vector(), ElementsAre(3.0, 4.0));
  // Now the norm is 6.5: under a larger max nothing changes.
  Tensor before = a.grad();
  EXPECT_NEAR(clip_grad_norm({a, b}, 10.0), 6.5, 1e-12);
  EXPECT_EQ(a.grad().impl(), before.impl());
  EXPECT_FALSE(none.grad().defined());
  // float32 gradients too.
  Tensor f = param({0.0, 0.0}, DType::F32);
  f.set_grad(from_vector({6.0, 8.0}, {2}, DType::F32));
  EXPECT_NEAR(clip_grad_norm({f}, 1.0), 10.0, 1e-6);
  EXPECT_NEAR(f.grad().to_vector()[0], 0.6, 1e-6);
  EXPECT_EQ(f.grad().dtype(), DType::F32);
  EXPECT_THAT(error_of([&] { clip_grad_norm({a}, 0.0); }), HasSubstr("max_norm must be positive"));
}

TEST(Optim, ClipGradNormOfALargeGradientSumsEveryRow) {
  // 3 * 2^16 + 5 values: whole rows of squared_norm (ops/reduce/reduce.h) and a
  // short tail, the values chosen so that a row skipped, counted twice or cut
  // short changes the sum.
  const int64_t n = 3 * (int64_t{1} << 16) + 5;
  std::vector<double> values(static_cast<size_t>(n));
  double exact = 0, magnitude = 0;
  for (int64_t i = 0; i < n; ++i) {
    values[static_cast<size_t>(i)] = 0.25 * static_cast<double>(i % 13) + 1.0 / static_cast<double>(1 + i / 65536);
    exact += values[static_cast<size_t>(i)] * values[static_cast<size_t>(i)];
  }
  magnitude = exact;
  for (DType dt : {DType::F32, DType::F64}) {
    SCOPED_TRACE(dtype_name(dt));
    Tensor p = param(std::vector<double>(static_cast<size_t>(n), 0.0), dt);
    p.set_grad(from_vector(values, {n}, dt));
    // The gradient's values are exact in float32 (multiples of 2^-2 plus
    // 1 / (1 + row) for rows 0..3: 1, 1/2, 1/3 rounded, 1/4), so the
    // reference differs only by those roundings and the sums' own: n u of
    // the sum in float64, plus float32's rounding of 1/3 (2^-24 relative,
    // doubled by the square).
    const double bound = static_cast<double>(n) * std::ldexp(1.0, -53) * magnitude +
                         (dt == DType::F32 ? 2 * std::ldexp(1.0, -24) * magnitude : 0.0);
    const double norm = clip_grad_norm({p}, 1e300);
    EXPECT_NEAR(norm * norm, exact, bound);
  }
}

TEST(Optim, StateRoundTripContinuesIdentically) {
  AdamOptions o;
  o.lr = 0.05;
  Tensor p = param(kP0), q = param(kP0);
  Adam a({p}, o);
  run_tiny(a, p, 2);
  NamedTensors st = a.state();
  std::vector<std::string> names;
  for (const auto& kv : st) names.push_back(kv.first);
  EXPECT_THAT(names, ElementsAre("step", "0.step", "0.m", "0.v"));
  const std::vector<double> saved_m = st[2].second.to_vector();
  Adam b({q}, o);
  for (size_t i = 0; i < 2; ++i) write_element(q, static_cast<int64_t>(i), p.to_vector()[i]);
  b.load_state(st);
  EXPECT_EQ(b.step_count(), 2);
  run_tiny(a, p, 1);
  run_tiny(b, q, 1);
  EXPECT_EQ(p.to_vector(), q.to_vector());
  // Loaded slots are copies: stepping b did not touch the tensors in `st`.
  EXPECT_EQ(st[2].second.to_vector(), saved_m);
  Sgd other({q}, 0.1, 0.9);
  EXPECT_THAT(error_of([&] { other.load_state(st); }), HasSubstr("lacks '0.velocity'"));
}

// --- weight decay --------------------------------------------------------

class TinyModel : public Module {
 public:
  explicit TinyModel(Generator& gen)
      : embedding(10, 4, gen, true, 0, 1, DType::F64),
        fc(4, 4, gen, true, DType::F64),
        w1(4, 4, gen, false, DType::F64),
        norm(4, 1e-6, DType::F64),
        out(4, 3, gen, true, DType::F64) {
    register_module("embedding", embedding);
    register_module("fc", fc);
    register_module("w1", w1);
    register_module("norm", norm);
    register_module("out", out);
  }
  Embedding embedding;
  Linear fc, w1;
  LayerNorm norm;
  Linear out;
};

TEST(WeightDecay, DefaultScopeIsWeightMatricesOnly) {
  Generator gen(5);
  TinyModel m(gen);
  WeightDecay wd(m.named_parameters(), 1e-3);
  // Not the embedding, biases, or the rank-1 layer-norm gain "norm.weight".
  EXPECT_THAT(wd.covered_names(), ElementsAre("fc.weight", "w1.weight", "out.weight"));
}

TEST(WeightDecay, OptOutByNameSuffixSubstringOrPredicate) {
  Generator gen(5);
  TinyModel m(gen);
  WeightDecayOptions by_suffix;
  by_suffix.exclude_suffixes = {"w1.weight"};
  EXPECT_THAT(WeightDecay(m.named_parameters(), 1e-3, by_suffix).covered_names(),
              ElementsAre("fc.weight", "out.weight"));
  WeightDecayOptions by_predicate;
  by_predicate.exclude = [](const std::string& n) { return n.rfind("out.", 0) == 0; };
  EXPECT_THAT(WeightDecay(m.named_parameters(), 1e-3, by_predicate).covered_names(),
              ElementsAre("fc.weight", "w1.weight"));
  WeightDecayOptions with_embeddings;
  with_embeddings.exclude_substrings = {};
  EXPECT_THAT(WeightDecay(m.named_parameters(), 1e-3, with_embeddings).covered_names(),
              ElementsAre("embedding.weight", "fc.weight", "w1.weight", "out.weight"));
  // DiSAN-style hierarchical names: ".w1.weight"/".w2.weight" inside a Disa opt out.
  NamedTensors disan = {{"encoder.fw.fc.weight", param({1, 2, 3, 4})},
                        {"encoder.fw.w1.weight", param({1, 2, 3, 4})},
                        {"encoder.fw.w2.weight", param({1, 2, 3, 4})},
                        {"encoder.fw.bias", param({1, 2})}};
  for (auto& kv : disan) kv.second = from_vector(kv.second.to_vector(), {2, kv.second.numel() / 2}, DType::F64);
  WeightDecayOptions disan_opts;
  disan_opts.exclude_suffixes = {".w1.weight", ".w2.weight"};
  EXPECT_THAT(WeightDecay(disan, 1.0, disan_opts).covered_names(), ElementsAre("encoder.fw.fc.weight"));
  EXPECT_THAT(WeightDecay(disan, 1.0).covered_names(),
              ElementsAre("encoder.fw.fc.weight", "encoder.fw.w1.weight", "encoder.fw.w2.weight"));
}

TEST(WeightDecay, AllParametersWithThePapersFactor) {
  // Seeds 001 and 004: gamma ||theta||^2 over the whole model (embeddings,
  // biases and gains included), so the gradient is 2 gamma theta.
  Generator gen(8);
  TinyModel m(gen);
  WeightDecayOptions paper;
  paper.all_parameters = true;
  paper.factor = 1.0;
  const double gamma = 0.01;
  WeightDecay wd(m.named_parameters(), gamma, paper);
  EXPECT_EQ(wd.covered_names().size(), m.named_parameters().size());
  double want = 0;
  for (const auto& [name, w] : m.named_parameters())
    for (double x : w.to_vector()) want += x * x;
  Tensor pen = wd.penalty();
  EXPECT_NEAR(pen.item(), gamma * want, 1e-12);
  pen.backward();
  for (const Tensor& t : {m.embedding.weight, m.norm.weight}) {  // biases start at 0: their gradient is 0 too
    std::vector<double> w = t.to_vector(), g = t.grad().to_vector();
    double largest = 0;
    for (size_t i = 0; i < w.size(); ++i) {
      EXPECT_NEAR(g[i], 2 * gamma * w[i], 1e-14);
      largest = std::max(largest, std::fabs(g[i]));
    }
    EXPECT_GT(largest, 0.0);
  }
  EXPECT_TRUE(m.fc.bias.grad().defined());  // covered (its value, hence its gradient, is 0 at initialisation)
  WeightDecayOptions bad;
  bad.factor = 0;
  EXPECT_THROW(WeightDecay(m.named_parameters(), gamma, bad), Error);
}

TEST(WeightDecay, PenaltyIsHalfGammaSumOfSquaresWithGradientGammaW) {
  Generator gen(7);
  TinyModel m(gen);
  const double gamma = 0.01;
  WeightDecay wd(m.named_parameters(), gamma);
  double want = 0;
  for (const Tensor& w : {m.fc.weight, m.w1.weight, m.out.weight})
    for (double x : w.to_vector()) want += x * x;
  want *= 0.5 * gamma;
  Tensor pen = wd.penalty();
  EXPECT_EQ(pen.dim(), 0);
  EXPECT_NEAR(pen.item(), want, 1e-12);
  pen.backward();
  std::vector<double> w = m.fc.weight.to_vector(), g = m.fc.weight.grad().to_vector();
  for (size_t i = 0; i < w.size(); ++i) EXPECT_NEAR(g[i], gamma * w[i], 1e-14);
  EXPECT_FALSE(m.fc.bias.grad().defined());
  EXPECT_FALSE(m.embedding.weight.grad().defined());
  EXPECT_FALSE(m.norm.weight.grad().defined());
  // Nothing covered: a constant zero.
  WeightDecay none(NamedTensors{{"fc.bias", m.fc.bias}}, gamma);
  EXPECT_TRUE(none.covered_names().empty());
  EXPECT_EQ(none.penalty().item(), 0.0);
}

}  // namespace
}  // namespace attn
