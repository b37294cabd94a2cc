// The sampled gradient check (ops/sampled_gradcheck.h), its module form
// (nn/gradcheck_module.h) and the whole-model check (train/model_gradcheck.h):
// red on a backward that is wrong on purpose, on one wrong element, on an
// all-zero gradient, on a non-finite or non-deterministic function; green on
// every registered encoder with every head.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "attn/engine/autograd.h"
#include "attn/engine/copy.h"
#include "attn/engine/error.h"
#include "attn/engine/random.h"
#include "attn/models/encoder.h"
#include "attn/nn/gradcheck_module.h"
#include "attn/ops/binary/binary.h"
#include "attn/ops/dropout/dropout.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/ops/sampled_gradcheck.h"
#include "attn/ops/unary/unary.h"
#include "attn/ops/view/view.h"
#include "attn/train/model_gradcheck.h"

namespace attn {
namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

Tensor leaf(const Shape& shape, uint64_t seed, double lo = -1.0, double hi = 1.0) {
  Generator gen(seed);
  return rand_uniform(shape, lo, hi, gen, DType::F64).set_requires_grad();
}

// The identity whose backward scales the gradient: by `factor` everywhere, or
// only at flat element `only` when it is not negative. Test-only: a backward
// that is wrong on purpose.
Tensor identity_with_backward_scaled(const Tensor& x, double factor, int64_t only = -1) {
  Tensor y = clone(x.detach());
  record(y, "identity_with_backward_scaled", {x}, {}, [factor, only](const Tensor& grad, const std::vector<bool>&) {
    if (only < 0) return std::vector<Tensor>{grad * factor};
    Tensor g = clone(grad);
    write_element(g, only, read_element(g, only) * factor);
    return std::vector<Tensor>{g};
  });
  return y;
}

// The identity whose backward gives its input no gradient at all (a node that
// forgets an input).
Tensor identity_dropping_gradient(const Tensor& x) {
  Tensor y = clone(x.detach());
  record(y, "identity_dropping_gradient", {x}, {},
         [](const Tensor&, const std::vector<bool>&) { return std::vector<Tensor>{Tensor()}; });
  return y;
}

TEST(SampledGradcheck, PassesOnACorrectFunctionAndCountsItsSample) {
  Tensor x = leaf({6, 5}, 1), w = leaf({5}, 2), c = leaf({3}, 3).set_requires_grad(false);
  SampledGradcheckOptions o;
  o.samples = 7;
  SampledGradcheckResult r =
      gradcheck([](const std::vector<Tensor>& in) { return tanh(in[0]) * in[1] + in[0] * in[0]; }, {x, w, c}, o);
  ASSERT_TRUE(r.passed) << r.failure;
  ASSERT_EQ(r.inputs.size(), 2u);  // c does not require grad
  EXPECT_EQ(r.inputs[0].label, "input 0");
  EXPECT_EQ(r.inputs[0].checked, 7);  // a sample of the 30 elements
  EXPECT_EQ(r.inputs[1].checked, 5);  // all of the 5
  EXPECT_EQ(r.checked, 12);
  // Central differences in float64 at step 1e-6 agree to ~1e-9 here (their
  // truncation error is eps^2 |f'''| / 6, their rounding ~1e-16 / eps).
  EXPECT_LT(r.max_abs_error, 1e-7);
  // d/dw of tanh(x) * w is tanh(x), |tanh(x)| <= tanh(1) on [-1, 1]; some element is well above 0.
  EXPECT_GT(r.inputs[1].max_abs_gradient, 0.1);
  EXPECT_LE(r.inputs[1].max_abs_gradient, std::tanh(1.0) * 6);
  EXPECT_EQ(r.inputs[0].worst.index.size(), 2u);
}

TEST(SampledGradcheck, CatchesADeliberateErrorInOneElementAndNamesIt) {
  // Element [2, 1] (flat 2 * 4 + 1 = 9) gets 1.5x its gradient; every other
  // element is right. With every element in the sample it must be found.
  Tensor x = leaf({3, 4}, 4);
  SampledGradcheckOptions o;
  o.samples = 12;
  SampledGradcheckResult r =
      gradcheck([](const std::vector<Tensor>& in) { return identity_with_backward_scaled(tanh(in[0]), 1.5, 9); }, {x},
                o, {"parameter 'x'"});
  ASSERT_FALSE(r.passed);
  const GradcheckElement& worst = r.inputs[0].worst;
  EXPECT_EQ(worst.index, (std::vector<int64_t>{2, 1}));
  EXPECT_NEAR(worst.analytic, 1.5 * worst.numeric, 1e-6);
  EXPECT_TRUE(contains(r.failure, "parameter 'x' element [2, 1]: analytic ")) << r.failure;
  EXPECT_TRUE(contains(r.failure, " numeric ")) << r.failure;
}

TEST(SampledGradcheck, TheSampleAlwaysHoldsAnElementWithANonzeroGradient) {
  // Only element 37 of 100 reaches the output, and its backward is doubled:
  // a sample of 2 drawn blindly would almost surely miss it.
  Tensor x = leaf({100}, 5);
  SampledGradcheckOptions o;
  o.samples = 2;
  auto fn = [](const std::vector<Tensor>& in) {
    return identity_with_backward_scaled(narrow(in[0], 0, 37, 1) * 3.0, 2.0);
  };
  SampledGradcheckResult r = gradcheck(fn, {x}, o);
  ASSERT_FALSE(r.passed);
  EXPECT_EQ(r.inputs[0].checked, 2);
  EXPECT_EQ(r.inputs[0].worst.index, (std::vector<int64_t>{37}));
  EXPECT_TRUE(contains(r.failure, "input 0 element [37]")) << r.failure;
}

TEST(SampledGradcheck, AnAllZeroAnalyticGradientFails) {
  // sum(x) - sum(x): the tape's gradient is exactly zero and so are the
  // central differences; the check proves nothing and must say so.
  Tensor x = leaf({4}, 6);
  SampledGradcheckResult r = gradcheck([](const std::vector<Tensor>& in) { return sum(in[0]) - sum(in[0]); }, {x});
  ASSERT_FALSE(r.passed);
  EXPECT_TRUE(contains(r.failure, "input 0: the analytic gradient is all zero")) << r.failure;
}

TEST(SampledGradcheck, AnUnreachedInputFailsUnlessAllowedAndADroppedGradientAlwaysFails) {
  Tensor x = leaf({4}, 7), unused = leaf({3}, 8);
  auto uses_x_only = [](const std::vector<Tensor>& in) { return exp(in[0]); };
  SampledGradcheckResult strict = gradcheck(uses_x_only, {x, unused});
  ASSERT_FALSE(strict.passed);
  EXPECT_TRUE(contains(strict.failure, "input 1: the analytic gradient is all zero")) << strict.failure;
  SampledGradcheckOptions o;
  o.allow_unreached = true;
  SampledGradcheckResult lenient = gradcheck(uses_x_only, {x, unused}, o);
  ASSERT_TRUE(lenient.passed) << lenient.failure;
  EXPECT_TRUE(lenient.inputs[0].reached);
  EXPECT_FALSE(lenient.inputs[1].reached);
  // An input the function uses but whose gradient a node drops is not excused.
  SampledGradcheckResult dropped =
      gradcheck([](const std::vector<Tensor>& in) { return exp(in[0]) + identity_dropping_gradient(in[1]); },
                {x, leaf({4}, 9)}, o);
  ASSERT_FALSE(dropped.passed);
  EXPECT_TRUE(contains(dropped.failure, "input 1 element [")) << dropped.failure;
  EXPECT_TRUE(contains(dropped.failure, "analytic 0 numeric ")) << dropped.failure;
}

TEST(SampledGradcheck, ANonFiniteForwardFails) {
  Tensor x = leaf({3}, 10, -2.0, -1.0);  // log of negative numbers: NaN
  SampledGradcheckResult r = gradcheck([](const std::vector<Tensor>& in) { return log(in[0]); }, {x});
  ASSERT_FALSE(r.passed);
  EXPECT_TRUE(contains(r.failure, "non-finite")) << r.failure;
}

TEST(SampledGradcheck, ANonDeterministicFunctionFails) {
  Tensor x = leaf({50}, 11);
  Generator gen(12);
  SampledGradcheckResult r =
      gradcheck([&gen](const std::vector<Tensor>& in) { return dropout(in[0], 0.5, gen, true); }, {x});
  ASSERT_FALSE(r.passed);
  EXPECT_TRUE(contains(r.failure, "not deterministic")) << r.failure;
}

TEST(SampledGradcheck, RefusesFloat32AndAnEmptySample) {
  Tensor x = ones({3}).set_requires_grad();  // float32
  EXPECT_THROW(gradcheck([](const std::vector<Tensor>& in) { return in[0]; }, {x}), Error);
  SampledGradcheckOptions o;
  o.samples = 0;
  EXPECT_THROW(gradcheck([](const std::vector<Tensor>& in) { return in[0]; }, {leaf({3}, 13)}, o), Error);
}

// A child module "fusion" with parameters w1 and w2; `wrong` routes w1
// through the op whose backward doubles the gradient.
class Fusion : public Module {
 public:
  explicit Fusion(Generator& gen) {
    w1 = register_parameter("w1", rand_uniform({4, 3}, -1, 1, gen, DType::F64));
    w2 = register_parameter("w2", rand_uniform({3}, -1, 1, gen, DType::F64));
  }
  Tensor w1, w2;
};

class SmallModel : public Module {
 public:
  SmallModel(Generator& gen, bool wrong) : fusion_(gen), wrong_(wrong) {
    register_module("fusion", fusion_);
    scale = register_parameter("scale", rand_uniform({3}, 0.5, 1.5, gen, DType::F64));
  }
  Tensor forward(const Tensor& x) const {
    Tensor w1 = wrong_ ? identity_with_backward_scaled(fusion_.w1, 2.0) : fusion_.w1;
    return tanh(sum(x * w1, {0}) + fusion_.w2) * scale;  // x [4, 3] -> [3]
  }
  Tensor scale;

 private:
  Fusion fusion_;
  bool wrong_;
};

TEST(ModuleGradcheck, ABackwardWrongOnPurposeFailsAndNamesTheParameter) {
  Generator gen(14);
  Tensor x = rand_uniform({4, 3}, -1, 1, gen, DType::F64);
  for (bool wrong : {false, true}) {
    Generator init(15);
    SmallModel m(init, wrong);
    ModuleGradcheckResult r = gradcheck_module(m, [&] { return m.forward(x); });
    // A module's own parameters come before its children's.
    ASSERT_EQ(r.names, (std::vector<std::string>{"scale", "fusion.w1", "fusion.w2"}));
    if (!wrong) {
      EXPECT_TRUE(r.result.passed) << r.result.failure;
      continue;
    }
    ASSERT_FALSE(r.result.passed);
    EXPECT_TRUE(r.result.inputs[0].passed) << r.result.inputs[0].failure;
    EXPECT_FALSE(r.result.inputs[1].passed);
    EXPECT_TRUE(r.result.inputs[2].passed) << r.result.inputs[2].failure;
    EXPECT_TRUE(contains(r.result.failure, "parameter 'fusion.w1' element [")) << r.result.failure;
    const GradcheckElement& worst = r.result.inputs[1].worst;
    EXPECT_NEAR(worst.analytic, 2.0 * worst.numeric, 1e-6 + 1e-3 * std::abs(worst.numeric));
  }
}

TEST(ModuleGradcheck, SkippedParametersAreListedAndNotChecked) {
  Generator init(16);
  SmallModel m(init, true);
  Tensor x = ones({4, 3}, DType::F64);
  ModuleGradcheckOptions o;
  o.skip = [](const std::string& name, const Tensor&) { return name == "fusion.w1"; };
  ModuleGradcheckResult r = gradcheck_module(m, [&] { return m.forward(x); }, o);
  EXPECT_TRUE(r.result.passed) << r.result.failure;
  EXPECT_EQ(r.skipped, (std::vector<std::string>{"fusion.w1"}));
  EXPECT_EQ(r.names, (std::vector<std::string>{"scale", "fusion.w2"}));
}

// One encoder with one head, in float64 at the small size of `attn gradcheck
// --model`: every parameter tensor checked (or skipped or unused for a reason).
void expect_model_passes(const std::string& encoder, TaskKind task) {
  ModelGradcheckSpec spec;
  spec.config = small_model_config(encoder);
  spec.task = task;
  ModuleGradcheckResult m = gradcheck_task_model(spec);
  const SampledGradcheckResult& r = m.result;
  const std::string what = encoder + "/" + task_name(task);
  EXPECT_TRUE(r.passed) << what << ": " << r.failure;
  EXPECT_GE(r.inputs.size(), 3u) << what;  // the embedding and the head's two layers at least
  size_t reached = 0;
  for (const GradcheckInputReport& in : r.inputs) reached += in.reached ? 1 : 0;
  // Only the sentence readout may go unused, and only under the tagging head.
  if (task != TaskKind::Tag) {
    EXPECT_EQ(reached, r.inputs.size()) << what;
  }
  EXPECT_GT(reached, 0u) << what;
  // ReSAN's selection policy is trained by REINFORCE, not by the loss.
  EXPECT_EQ(m.skipped.empty(), encoder != "resan") << what;
}

// Every registered encoder with the default head (classify); `attn gradcheck
// --model all --head H` (CTest cli.gradcheck_model_all_*) runs the others.
class ModelGradcheck : public ::testing::TestWithParam<std::string> {};

TEST_P(ModelGradcheck, DefaultHeadMatchesCentralDifferences) { expect_model_passes(GetParam(), TaskKind::Classify); }

TEST(ModelGradcheckHeads, EveryHeadOnARecurrentAndAnAttentionEncoder) {
  for (const char* encoder : {"bilstm", "disan"})
    for (TaskKind task : {TaskKind::Classify, TaskKind::Pair, TaskKind::Relatedness, TaskKind::Tag})
      expect_model_passes(encoder, task);
}

INSTANTIATE_TEST_SUITE_P(Registry, ModelGradcheck, ::testing::ValuesIn(encoder_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace attn
