// Gradient hooks (engine/gradient_hooks.h): a hook sees a tensor's gradient
// during backward and may replace it, on leaves and on non-leaf tensors.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "attn/engine/autograd.h"
#include "attn/engine/copy.h"
#include "attn/engine/error.h"
#include "attn/engine/gradient_hooks.h"
#include "attn/engine/random.h"
#include "attn/nn/linear.h"
#include "attn/ops/binary/binary.h"
#include "attn/ops/matmul/matmul.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/ops/unary/unary.h"
#include "test_util.h"

namespace attn {
namespace {

Tensor random_leaf(const Shape& shape, uint64_t seed) {
  Generator g(seed);
  return rand_uniform(shape, -1, 1, g, DType::F64).set_requires_grad(true);
}

// f(x, w) = sum(tanh(x w) * (x w)): every input's gradient depends on all of x and w.
Tensor f(const Tensor& x, const Tensor& w) {
  Tensor h = matmul(x, w);
  return sum(tanh(h) * h);
}

TEST(GradientHooks, LeafHookThatDoublesDoublesTheGradient) {
  Tensor x = random_leaf({3, 4}, 1), w = random_leaf({4, 2}, 2);
  f(x, w).backward();
  const std::vector<double> plain = x.grad().to_vector(), plain_w = w.grad().to_vector();
  x.zero_grad();
  w.zero_grad();
  x.register_hook([](const Tensor& g) { return 2.0 * g; });
  f(x, w).backward();
  const std::vector<double> doubled = x.grad().to_vector();
  ASSERT_EQ(doubled.size(), plain.size());
  bool nonzero = false;
  for (size_t i = 0; i < plain.size(); ++i) {
    EXPECT_EQ(doubled[i], 2.0 * plain[i]) << i;  // same path run twice; doubling is exact
    nonzero = nonzero || plain[i] != 0;
  }
  EXPECT_TRUE(nonzero);
  EXPECT_EQ(w.grad().to_vector(), plain_w) << "a hook on x changes nothing upstream of w";
}

TEST(GradientHooks, NonLeafHookSeesTheGradientFlowingThrough) {
  // y = sum(h^2) with h = 3 x: the gradient reaching h is 2 h = 6 x.
  Tensor x = random_leaf({5}, 3);
  Tensor h = 3.0 * x;
  std::vector<double> seen;
  int calls = 0;
  h.register_hook([&](const Tensor& g) {
    ++calls;
    seen = g.to_vector();
    return Tensor();  // observe only
  });
  sum(h * h).backward();
  ASSERT_EQ(calls, 1);
  const std::vector<double> xs = x.to_vector();
  ASSERT_EQ(seen.size(), xs.size());
  for (size_t i = 0; i < xs.size(); ++i) EXPECT_NEAR(seen[i], 6.0 * xs[i], 1e-15 * std::fabs(xs[i]) + 1e-300);
  // Observing changed nothing: dy/dx = 18 x.
  const std::vector<double> gx = x.grad().to_vector();
  for (size_t i = 0; i < xs.size(); ++i) EXPECT_NEAR(gx[i], 18.0 * xs[i], 1e-14 * std::fabs(xs[i]) + 1e-300);
}

TEST(GradientHooks, NonLeafReplacementFlowsToTheInputs) {
  Tensor x = random_leaf({3, 4}, 4), w = random_leaf({4, 2}, 5);
  Tensor h = matmul(x, w);
  sum(tanh(h) * h).backward();
  const std::vector<double> plain = x.grad().to_vector();
  x.zero_grad();
  w.zero_grad();
  Tensor h2 = matmul(x, w);
  h2.register_hook([](const Tensor& g) { return 2.0 * g; });
  sum(tanh(h2) * h2).backward();
  const std::vector<double> doubled = x.grad().to_vector();
  for (size_t i = 0; i < plain.size(); ++i) EXPECT_EQ(doubled[i], 2.0 * plain[i]) << i;
}

TEST(GradientHooks, LeafUsedTwiceGetsItsHookOnceWithTheSum) {
  // y = sum(x * x) + sum(3 x): two contributions, 2 x and 3; the hook sees 2 x + 3 once.
  Tensor x = random_leaf({4}, 6);
  int calls = 0;
  std::vector<double> seen;
  x.register_hook([&](const Tensor& g) {
    ++calls;
    seen = g.to_vector();
    return Tensor();
  });
  (sum(x * x) + sum(3.0 * x)).backward();
  EXPECT_EQ(calls, 1);
  const std::vector<double> xs = x.to_vector();
  for (size_t i = 0; i < xs.size(); ++i) EXPECT_NEAR(seen[i], 2 * xs[i] + 3, 1e-15 * 8);
  EXPECT_EQ(x.grad().to_vector(), seen);
}

TEST(GradientHooks, HooksRunInOrderAndCanBeRemoved) {
  Tensor x = random_leaf({2}, 7);
  std::vector<int> order;
  HookHandle first = x.register_hook([&](const Tensor& g) {
    order.push_back(1);
    return g + 1.0;
  });
  x.register_hook([&](const Tensor& g) {
    order.push_back(2);
    return 10.0 * g;
  });
  sum(x).backward();  // gradient 1 -> 2 -> 20
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
  EXPECT_EQ(x.grad().to_vector(), (std::vector<double>{20, 20}));
  x.zero_grad();
  first.remove();
  first.remove();  // twice is harmless
  order.clear();
  sum(x).backward();
  EXPECT_EQ(order, (std::vector<int>{2}));
  EXPECT_EQ(x.grad().to_vector(), (std::vector<double>{10, 10}));
}

TEST(GradientHooks, HookOnTheRootSeesTheSeed) {
  Tensor x = random_leaf({3}, 8);
  Tensor y = sum(x * x);
  double seen = 0;
  y.register_hook([&](const Tensor& g) {
    seen = g.item();
    return 0.5 * g;
  });
  y.backward();
  EXPECT_EQ(seen, 1.0);
  const std::vector<double> xs = x.to_vector(), gx = x.grad().to_vector();
  for (size_t i = 0; i < xs.size(); ++i) EXPECT_NEAR(gx[i], xs[i], 1e-15);
}

TEST(GradientHooks, HookOnALeafRootSeesTheSeed) {
  Tensor x = random_leaf({}, 9);
  x.register_hook([](const Tensor& g) { return 3.0 * g; });
  x.backward();
  EXPECT_EQ(x.grad().item(), 3.0);
}

TEST(GradientHooks, RunEveryPassWithRetainedGraph) {
  Tensor x = random_leaf({3}, 10);
  Tensor h = exp(x);
  int calls = 0;
  h.register_hook([&](const Tensor&) {
    ++calls;
    return Tensor();
  });
  Tensor y = sum(h);
  y.backward(Tensor(), /*retain_graph=*/true);
  y.backward();
  EXPECT_EQ(calls, 2);
}

TEST(GradientHooks, ClipOneLayerByNorm) {
  // The documented use: rescale one layer's weight gradient to norm <= 0.01.
  Generator gen(11);
  Linear layer(6, 4, gen, true, DType::F64);
  const double max_norm = 0.01;
  layer.weight.register_hook([max_norm](const Tensor& g) {
    const double norm = std::sqrt(sum(g * g).item());
    return norm > max_norm ? g * (max_norm / norm) : Tensor();
  });
  Tensor x = rand_uniform({5, 6}, -3, 3, gen, DType::F64);
  sum(layer.forward(x) * layer.forward(x)).backward();
  const double norm = std::sqrt(sum(layer.weight.grad() * layer.weight.grad()).item());
  EXPECT_NEAR(norm, max_norm, 1e-15);
  EXPECT_GT(std::sqrt(sum(layer.bias.grad() * layer.bias.grad()).item()), max_norm) << "the bias is not clipped";
}

TEST(GradientHooks, AGradientAHookKeptIsNeverWrittenInPlace) {
  // u feeds an add (whose backward hands the incoming gradient on as is) and
  // a matmul (whose backward may add into a pending gradient in place). A
  // hook that keeps the add's gradient must find it unchanged afterwards.
  Tensor x = random_leaf({4, 3}, 12), w1 = random_leaf({3, 3}, 13), w2 = random_leaf({3, 3}, 14);
  Tensor u = matmul(x, w1);
  Tensor v = u + 1.0;
  Tensor kept, copy;
  v.register_hook([&](const Tensor& g) {
    kept = g;
    copy = clone(g);
    return Tensor();
  });
  Tensor z = matmul(u, w2);
  sum(tanh(v) * z).backward();
  ASSERT_TRUE(kept.defined());
  EXPECT_EQ(kept.to_vector(), copy.to_vector());
}

TEST(GradientHooks, ReplacementOfTheWrongShapeNamesTheOp) {
  Tensor x = random_leaf({3}, 15);
  Tensor h = exp(x);
  h.register_hook([](const Tensor&) { return zeros({2}, DType::F64); });
  const std::string what = testing_support::error_of([&] { sum(h).backward(); });
  EXPECT_NE(what.find("'exp'"), std::string::npos) << what;
  EXPECT_NE(what.find("[2]"), std::string::npos) << what;
}

TEST(GradientHooks, ReplacementOfTheWrongDtypeIsAnError) {
  Tensor x = random_leaf({3}, 16);
  x.register_hook([](const Tensor& g) { return cast(g, DType::F32); });
  EXPECT_THROW(sum(x).backward(), Error);
}

TEST(GradientHooks, RegisteringOnATensorWithoutGradIsAnError) {
  Tensor x = zeros({3}, DType::F64);
  EXPECT_THROW(x.register_hook([](const Tensor& g) { return g; }), Error);
  Tensor y = random_leaf({3}, 17);
  EXPECT_THROW(y.register_hook(nullptr), Error);
}

}  // namespace
}  // namespace attn
