// The mirrored summation task (train/synthetic/): the generator's targets
// against the formula, its counter stream (a sample depends on its index
// only), its moments against the closed forms, the models' configs, the
// linear head's and MSE's gradient, and the training loop's guarantees.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "attn/engine/autograd.h"
#include "attn/nn/gradcheck_module.h"
#include "attn/ops/loss/loss.h"
#include "attn/train/synthetic/mirrored_sum_data.h"
#include "attn/train/synthetic/mirrored_sum_models.h"
#include "attn/train/synthetic/mirrored_sum_report.h"
#include "attn/train/synthetic/mirrored_sum_training.h"
#include "test_util.h"

namespace attn {
namespace {

using testing_support::error_of;

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(MirroredSumData, TargetIsTheMirroredSumOfAHandCheckedCase) {
  // N = 4, d = 2. K = 2: y = a1*a4 + a2*a3. K = 3 adds a3*a2, so the pair
  // (2, 3) counts twice. Rows are 0-based: a_i is row i - 1.
  MirroredSumSpec spec{4, 2, 2, 7};
  for (int64_t k : {2, 3}) {
    spec.k = k;
    MirroredSumBatch b = mirrored_sum_batch(spec, MirroredSumSplit::Train, 5, 3, DType::F64);
    ASSERT_EQ(b.x.shape(), (Shape{3, 4, 2}));
    ASSERT_EQ(b.y.shape(), (Shape{3, 2}));
    ASSERT_EQ(b.mask.shape(), (Shape{3, 4}));
    for (int64_t s = 0; s < 3; ++s) {
      for (int64_t f = 0; f < 2; ++f) {
        auto a = [&](int64_t i) { return b.x.at({s, i - 1, f}); };
        const double expected = k == 2 ? a(1) * a(4) + a(2) * a(3) : a(1) * a(4) + a(2) * a(3) + a(3) * a(2);
        // One product and one sum per term in double, then stored: equal to
        // the last bit, as both orders of the same two-term sum are.
        EXPECT_NEAR(b.y.at({s, f}), expected, 4e-16 * k) << "k " << k << " sample " << s << " feature " << f;
        for (int64_t i = 1; i <= 4; ++i) {
          EXPECT_GE(a(i), 0.0);
          EXPECT_LT(a(i), 1.0);
          EXPECT_EQ(a(i), mirrored_sum_entry(spec, MirroredSumSplit::Train, 5 + s, (i - 1) * 2 + f));
        }
        EXPECT_EQ(b.mask.at({s, f}), 1);
      }
    }
  }
}

TEST(MirroredSumData, ASampleIsTheSameWhateverItsBatch) {
  MirroredSumSpec spec{10, 3, 4, 11};
  MirroredSumBatch five = mirrored_sum_batch(spec, MirroredSumSplit::Test, 0, 5, DType::F64);
  MirroredSumBatch one = mirrored_sum_batch(spec, MirroredSumSplit::Test, 3, 1, DType::F64);
  for (int64_t e = 0; e < 10 * 3; ++e) EXPECT_EQ(one.x.at({0, e / 3, e % 3}), five.x.at({3, e / 3, e % 3}));
  for (int64_t f = 0; f < 3; ++f) EXPECT_EQ(one.y.at({0, f}), five.y.at({3, f}));
  // float32 is the float64 sample rounded once.
  MirroredSumBatch single = mirrored_sum_batch(spec, MirroredSumSplit::Test, 3, 1, DType::F32);
  for (int64_t f = 0; f < 3; ++f)
    EXPECT_EQ(single.y.at({0, f}), static_cast<double>(static_cast<float>(one.y.at({0, f}))));
}

TEST(MirroredSumData, SplitsSeedsAndIndicesGiveDifferentSamples) {
  MirroredSumSpec spec{10, 3, 4, 11};
  auto first_entries = [&](const MirroredSumSpec& s, MirroredSumSplit split, int64_t index) {
    std::vector<double> v;
    for (int64_t e = 0; e < 30; ++e) v.push_back(mirrored_sum_entry(s, split, index, e));
    return v;
  };
  const auto train = first_entries(spec, MirroredSumSplit::Train, 0);
  EXPECT_NE(train, first_entries(spec, MirroredSumSplit::Test, 0));
  EXPECT_NE(train, first_entries(spec, MirroredSumSplit::Train, 1));
  MirroredSumSpec other = spec;
  other.seed = 12;
  EXPECT_NE(train, first_entries(other, MirroredSumSplit::Train, 0));
  // Training sample i and test sample j never coincide over a range of both
  // (a shared stream shifted by some index would show up here).
  for (int64_t i = 0; i < 50; ++i)
    for (int64_t j = 0; j < 50; ++j)
      ASSERT_NE(mirrored_sum_entry(spec, MirroredSumSplit::Train, i, 0), mirrored_sum_entry(spec, MirroredSumSplit::Test, j, 0));
}

TEST(MirroredSumData, ClosedFormsOfTheTargetsMoments) {
  // N even: K <= N/2 sums K distinct pairs, Var = K * 7/144; K > N/2 counts
  // 2K - N terms twice (K - N/2 pairs, each c^2 = 4): Var = (3K - N) 7/144.
  EXPECT_NEAR(mirrored_sum_mean_predictor_mse({100, 50, 10, 1}), 10 * 7.0 / 144, 1e-15);
  EXPECT_NEAR(mirrored_sum_mean_predictor_mse({100, 50, 60, 1}), 80 * 7.0 / 144, 1e-14);
  EXPECT_NEAR(mirrored_sum_mean_predictor_mse({100, 50, 99, 1}), 197 * 7.0 / 144, 1e-14);
  EXPECT_NEAR(mirrored_sum_target_mean({100, 50, 60, 1}), 15.0, 1e-15);
  // N = 5, K = 3: pairs (1,5), (2,4) and the middle a3^2 (Var(u^2) = 4/45, E = 1/3).
  EXPECT_NEAR(mirrored_sum_mean_predictor_mse({5, 2, 3, 1}), 2 * 7.0 / 144 + 4.0 / 45, 1e-15);
  EXPECT_NEAR(mirrored_sum_target_mean({5, 2, 3, 1}), 0.5 + 1.0 / 3, 1e-15);
  // The linear part leaves 1/144 of a pair's 7/144, 1/180 of the middle's 4/45.
  EXPECT_NEAR(mirrored_sum_linear_predictor_mse({100, 50, 60, 1}), 80 / 144.0, 1e-14);
  EXPECT_NEAR(mirrored_sum_linear_predictor_mse({5, 2, 3, 1}), 2 / 144.0 + 1 / 180.0, 1e-15);
}

// The residual of the linear prediction the closed form assumes, on sampled
// data: y - E[y] - sum_i c_i (a_i - 1/2) with c_i = 1/2 per time position i
// is summed (its partner's mean times the count), whose sample variance must
// be the linear MSE (same 5-standard-error bound as the moments below).
TEST(MirroredSumData, TheLinearPredictionLeavesTheClosedFormsResidual) {
  MirroredSumSpec spec{6, 20, 4, 5};  // pairs (1,6), (2,5) once, (3,4) twice
  const int64_t count = 5000;
  MirroredSumBatch b = mirrored_sum_batch(spec, MirroredSumSplit::Train, 0, count, DType::F64);
  const std::vector<double> weight = {0.5, 0.5, 1.0, 1.0, 0.5, 0.5};  // c_i: 1/2 per time the sum takes a_i
  double square = 0, mean = 0;
  std::vector<double> residuals;
  for (int64_t s = 0; s < count; ++s)
    for (int64_t f = 0; f < 20; ++f) {
      double r = b.y.at({s, f}) - mirrored_sum_target_mean(spec);
      for (int64_t i = 0; i < 6; ++i) r -= weight[static_cast<size_t>(i)] * (b.x.at({s, i, f}) - 0.5);
      residuals.push_back(r);
      mean += r;
    }
  const double m = static_cast<double>(residuals.size());
  mean /= m;
  for (double r : residuals) square += (r - mean) * (r - mean);
  const double expected = mirrored_sum_linear_predictor_mse(spec);
  EXPECT_NEAR(expected, (1 + 1 + 4) / 144.0, 1e-15);
  EXPECT_NEAR(square / (m - 1), expected, 5 * expected * std::sqrt(3.0 / m));
  EXPECT_NEAR(mean, 0.0, 5 * std::sqrt(expected / m));
}

TEST(MirroredSumData, SampleMomentsMatchTheClosedForms) {
  // N = 5, K = 4 covers all three kinds of term: (1,5) once, (2,4) twice,
  // the middle a3^2 once. M = 4000 samples x 25 features = 1e5 independent
  // targets: the sample mean's standard error is sd / sqrt(M) and the
  // sample variance's is about Var sqrt((kurtosis - 1) / M) with a kurtosis
  // below 4 for these sums, so 5 standard errors bound both.
  MirroredSumSpec spec{5, 25, 4, 3};
  MirroredSumBatch b = mirrored_sum_batch(spec, MirroredSumSplit::Train, 0, 4000, DType::F64);
  const std::vector<double> y = b.y.to_vector(), x = b.x.to_vector();
  const double m = static_cast<double>(y.size());
  double mean = 0, square = 0;
  for (double v : y) mean += v;
  mean /= m;
  for (double v : y) square += (v - mean) * (v - mean);
  const double variance = square / (m - 1);
  const double var = mirrored_sum_mean_predictor_mse(spec);
  EXPECT_NEAR(var, 7.0 / 144 + 4 * 7.0 / 144 + 4.0 / 45, 1e-15);
  EXPECT_NEAR(mean, mirrored_sum_target_mean(spec), 5 * std::sqrt(var / m));
  EXPECT_NEAR(variance, var, 5 * var * std::sqrt(3.0 / m));
  // The entries: U(0, 1), mean 1/2 and variance 1/12 (its own error 1/sqrt(12 M')).
  double entry_mean = 0;
  for (double v : x) entry_mean += v;
  entry_mean /= static_cast<double>(x.size());
  EXPECT_NEAR(entry_mean, 0.5, 5 / std::sqrt(12.0 * static_cast<double>(x.size())));
}

TEST(MirroredSumData, KOutsideOneToNMinusOneIsRefusedNamingIt) {
  for (int64_t k : {0, 10, -1}) {
    const std::string e = error_of([&] { check_mirrored_sum_spec({10, 3, k, 1}); });
    EXPECT_TRUE(has(e, "K must be in 1..N-1 = 1..9, got " + std::to_string(k))) << e;
  }
}

TEST(MirroredSumModels, EveryModelBuildsAndPredictsAVectorOfD) {
  MirroredSumSpec spec{16, 3, 5, 1};
  MirroredSumBatch b = mirrored_sum_batch(spec, MirroredSumSplit::Train, 0, 2);
  for (const MirroredSumModelInfo& info : mirrored_sum_models()) {
    Generator init(1), noise(2);
    MirroredSumModel m(mirrored_sum_encoder_config(info.name, 20), spec.dim, DType::F32, init, noise);
    Tensor y = m.forward(b.x, b.mask);
    EXPECT_EQ(y.shape(), (Shape{2, 3})) << info.name;
    for (double v : y.to_vector()) EXPECT_TRUE(std::isfinite(v)) << info.name;
  }
}

TEST(MirroredSumModels, TheFiguresSettingsAreThePapers) {
  Config flex = mirrored_sum_encoder_config("ms-trans-flex", 100);
  EXPECT_EQ(flex.get("scales", ""), "3,n/16,n/8,n/4,n/2");
  EXPECT_EQ(flex.get("head_counts", ""), "2,2,2,2,2,2,2,2,2,2");
  EXPECT_EQ(flex.get("layers", ""), "2");
  Config deep = mirrored_sum_encoder_config("ms-trans-deephier-s", 100);
  EXPECT_EQ(deep.get("scales", ""), "3");
  EXPECT_EQ(deep.get("layers", ""), "6");
  EXPECT_EQ(deep.get("head_counts", ""), "10,10,10,10,10,10");
}

TEST(MirroredSumModels, UnknownModelsAndWidthsAreRefusedNamingTheProblem) {
  for (int64_t hidden : {100, 45}) {  // the name is checked before the width
    std::string e = error_of([&] { mirrored_sum_encoder_config("ms-trans-wide", hidden); });
    EXPECT_TRUE(has(e, "unknown model 'ms-trans-wide'") && has(e, "ms-trans-flex")) << e;
  }
  std::string e;
  e = error_of([] { mirrored_sum_encoder_config("transformer", 45); });
  EXPECT_TRUE(has(e, "multiple of 10, got 45")) << e;
  e = error_of([] { mirrored_sum_encoder_config("bilstm", 45); });
  EXPECT_TRUE(has(e, "must be even, got 45")) << e;
}

// Encoder, linear head and MSE in float64: every parameter's gradient of the
// loss against central differences (the project's sampled check: step 1e-6,
// whose truncation error ~1e-12 and rounding error ~1e-16 / 1e-6 = 1e-10 of
// the loss's scale sit far inside atol 1e-5 + rtol 1e-3), none all zero.
TEST(MirroredSumModels, GradientOfHeadAndLossMatchesCentralDifferences) {
  MirroredSumSpec spec{12, 3, 4, 5};
  MirroredSumBatch b = mirrored_sum_batch(spec, MirroredSumSplit::Train, 0, 2, DType::F64);
  Generator init(3), noise(4);
  MirroredSumModel m(mirrored_sum_encoder_config("ms-trans-flex", 10), spec.dim, DType::F64, init, noise);
  m.set_training(false);
  ModuleGradcheckResult r = gradcheck_module(m, [&] { return mse_loss(m.forward(b.x, b.mask), b.y); });
  EXPECT_TRUE(r.result.passed) << r.result.failure;
  bool head_checked = false;
  for (size_t i = 0; i < r.names.size(); ++i) {
    EXPECT_GT(r.result.inputs[i].max_abs_gradient, 0) << r.names[i];
    head_checked = head_checked || r.names[i] == "head.weight";
  }
  EXPECT_TRUE(head_checked);
}

// The head's weight gradient in closed form: L = sum (W s + c - y)^2 / (B d)
// gives dL/dW = 2 / (B d) sum_b (pred_b - y_b) s_b^T. Both sides are a few
// dozen float64 products and sums of numbers of order 1: 1e-13 is a
// thousand times their rounding.
TEST(MirroredSumModels, HeadGradientIsTheClosedForm) {
  MirroredSumSpec spec{12, 3, 4, 5};
  MirroredSumBatch b = mirrored_sum_batch(spec, MirroredSumSplit::Train, 0, 4, DType::F64);
  Generator init(3), noise(4);
  MirroredSumModel m(mirrored_sum_encoder_config("multicnn", 6), spec.dim, DType::F64, init, noise);
  m.set_training(false);
  Tensor pred = m.forward(b.x, b.mask);
  mse_loss(pred, b.y).backward();
  Tensor sentence;
  {
    NoGrad no_grad;
    sentence = m.encoder().encode(b.x, b.mask).sentence;
  }
  Tensor weight_grad;
  for (const auto& [name, p] : m.named_parameters())
    if (name == "head.weight") weight_grad = p.grad();
  ASSERT_TRUE(weight_grad.defined());
  const int64_t batch = 4, d = spec.dim, s_dim = sentence.size(1);
  ASSERT_EQ(weight_grad.shape(), (Shape{d, s_dim}));
  double largest = 0;
  for (int64_t o = 0; o < d; ++o)
    for (int64_t j = 0; j < s_dim; ++j) {
      double expected = 0;
      for (int64_t s = 0; s < batch; ++s)
        expected += 2.0 / static_cast<double>(batch * d) * (pred.at({s, o}) - b.y.at({s, o})) * sentence.at({s, j});
      EXPECT_NEAR(weight_grad.at({o, j}), expected, 1e-13) << o << ", " << j;
      largest = std::max(largest, std::fabs(expected));
    }
  EXPECT_GT(largest, 1e-3);
}

TEST(MirroredSumTraining, ARunIsFiniteAndRepeatsFromItsSeed) {
  MirroredSumSpec spec{12, 3, 4, 9};
  MirroredSumRunOptions o;
  o.model = "ms-trans-hier-s";
  o.hidden = 10;
  o.train_samples = 50;  // not a multiple of the batch: a batch wraps
  o.test_samples = 30;
  o.steps = 6;
  o.batch = 16;
  o.seed = 9;
  MirroredSumRunResult a = train_mirrored_sum(spec, o), again = train_mirrored_sum(spec, o);
  EXPECT_TRUE(std::isfinite(a.test_mse) && a.test_mse > 0);
  EXPECT_EQ(a.test_mse, again.test_mse);
  EXPECT_EQ(a.final_train_loss, again.final_train_loss);
  o.seed = 10;
  EXPECT_NE(train_mirrored_sum(spec, o).test_mse, a.test_mse);
}

TEST(MirroredSumTraining, ZeroSamplesOrStepsAreRefused) {
  MirroredSumSpec spec{12, 3, 4, 9};
  MirroredSumRunOptions o;
  o.hidden = 10;
  o.train_samples = 0;
  EXPECT_TRUE(has(error_of([&] { train_mirrored_sum(spec, o); }), "at least one sample each, got 0"));
  o.train_samples = 10;
  o.steps = 0;
  EXPECT_TRUE(has(error_of([&] { train_mirrored_sum(spec, o); }), "steps and batch must be positive"));
}

TEST(MirroredSumReport, CsvHasOneRowPerModelAndKAndTheSvgALinePerModel) {
  std::vector<MirroredSumRow> rows = {{"transformer", 10, 0.25, 0.5, 0.125, 100, 1000, 200, 32, 1234, 1.5},
                                      {"transformer", 50, 2.0, 2.5, 0.25, 100, 1000, 200, 32, 1234, 1.5},
                                      {"bilstm", 10, 0.5, 0.5, 0.125, 100, 1000, 200, 32, 99, 0.5}};
  const std::string csv = mirrored_sum_csv(rows);
  EXPECT_EQ(csv,
            "model,K,test_mse,mean_predictor_mse,linear_predictor_mse,relative_mse,steps,train_samples,test_samples,"
            "batch,parameters,seconds\n"
            "transformer,10,0.25,0.5,0.125,0.5,100,1000,200,32,1234,1.5\n"
            "transformer,50,2,2.5,0.25,0.8,100,1000,200,32,1234,1.5\n"
            "bilstm,10,0.5,0.5,0.125,1,100,1000,200,32,99,0.5\n");
  const std::string svg = mirrored_sum_svg(rows, "tiny");
  EXPECT_TRUE(has(svg, "<svg") && has(svg, "transformer") && has(svg, "bilstm") && has(svg, "test MSE"));
  EXPECT_TRUE(has(svg, "K (pairs summed)") && has(svg, "best linear in the inputs"));
}

}  // namespace
}  // namespace attn
