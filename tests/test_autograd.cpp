// The tape: accumulation across calls, graph freeing, NoGrad, detach, deep
// graphs without recursion, gradients through views.
#include <gtest/gtest.h>

#include <cmath>

#include "attn/engine/autograd.h"
#include "attn/engine/error.h"
#include "attn/ops/binary/binary.h"
#include "attn/engine/copy.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/ops/unary/unary.h"
#include "attn/ops/view/view.h"

namespace attn {
namespace {

Tensor leaf(std::vector<double> v, Shape s) { return from_vector(v, s, DType::F64).set_requires_grad(true); }

TEST(Autograd, ProductRuleAndAccumulationAcrossCalls) {
  Tensor x = leaf({2.0}, {});
  Tensor y = mul(x, x);  // dy/dx = 2x = 4
  y.backward();
  EXPECT_DOUBLE_EQ(x.grad().item(), 4.0);
  mul(x, x).backward();  // += across calls
  EXPECT_DOUBLE_EQ(x.grad().item(), 8.0);
  x.zero_grad();
  EXPECT_FALSE(x.grad().defined());
}

TEST(Autograd, GraphIsFreedUnlessRetained) {
  Tensor x = leaf({1.0, 2.0}, {2});
  Tensor y = sum(exp(x));
  y.backward(Tensor(), /*retain_graph=*/true);
  y.backward();  // retained once: a second pass works
  EXPECT_NEAR(x.grad().at({1}), 2 * std::exp(2.0), 1e-12);
  try {
    y.backward();
    FAIL() << "a freed graph must not run again";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("retain_graph"), std::string::npos) << e.what();
  }
}

TEST(Autograd, NoGradRecordsNothingAndDetachCutsHistory) {
  Tensor x = leaf({1.0}, {});
  {
    NoGrad guard;
    Tensor y = exp(x);
    EXPECT_FALSE(y.requires_grad());
    EXPECT_FALSE(grad_enabled());
  }
  EXPECT_TRUE(grad_enabled());
  Tensor z = exp(x).detach();
  EXPECT_FALSE(z.requires_grad());
  EXPECT_EQ(z.grad_fn(), nullptr);
  Tensor w = mul(exp(x), z);  // z is a constant here
  w.backward();
  EXPECT_NEAR(x.grad().item(), std::exp(1.0) * std::exp(1.0), 1e-12);
}

TEST(Autograd, DeepChainDoesNotOverflowTheStack) {
  Tensor x = leaf({0.5}, {});
  Tensor y = x;
  for (int i = 0; i < 200000; ++i) y = add_scalar(y, 1e-6);
  y.backward();
  EXPECT_DOUBLE_EQ(x.grad().item(), 1.0);
}

TEST(Autograd, DiamondSumsBothPaths) {
  Tensor x = leaf({3.0}, {});
  Tensor a = mul_scalar(x, 2.0);
  Tensor b = mul(a, a);       // 4x^2
  Tensor c = add(a, b);       // 2x + 4x^2: d/dx = 2 + 8x = 26
  c.backward();
  EXPECT_DOUBLE_EQ(x.grad().item(), 26.0);
}

TEST(Autograd, GradientThroughSliceLandsInTheRightElements) {
  Tensor x = leaf({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor s = slice(transpose(x, 0, 1), 0, 1, 3);  // rows 1..2 of x^T = columns 1..2 of x
  Tensor w = from_vector({1, 10, 100, 1000}, {2, 2}, DType::F64);
  sum(mul(s, w)).backward();
  // s[i][j] = x[j][i+1]; weight w[i][j] lands at x[j][i+1].
  EXPECT_EQ(x.grad().to_vector(), (std::vector<double>{0, 1, 100, 0, 10, 1000}));
}

TEST(Autograd, GradientThroughExpandSumsBroadcastCopies) {
  Tensor b = leaf({1, 2}, {2});
  Tensor e = expand(b, {3, 2});
  sum(e).backward();
  EXPECT_EQ(b.grad().to_vector(), (std::vector<double>{3, 3}));
}

TEST(Autograd, SharedGradientTensorsAreNotAliasedBetweenLeaves) {
  Tensor a = leaf({1, 2}, {2});
  Tensor b = leaf({3, 4}, {2});
  sum(add(a, b)).backward();
  sum(mul_scalar(a, 5.0)).backward();  // accumulates into a only
  EXPECT_EQ(a.grad().to_vector(), (std::vector<double>{6, 6}));
  EXPECT_EQ(b.grad().to_vector(), (std::vector<double>{1, 1}));
}

TEST(Autograd, NonScalarBackwardNeedsAGradient) {
  Tensor x = leaf({1, 2}, {2});
  Tensor y = exp(x);
  EXPECT_THROW(y.backward(), Error);
  y.backward(from_vector({1, 0}, {2}, DType::F64));
  EXPECT_NEAR(x.grad().at({0}), std::exp(1.0), 1e-12);
  EXPECT_EQ(x.grad().at({1}), 0.0);
}

TEST(Autograd, WhereKeepsNanOfTheUntakenBranchOutOfTheGradient) {
  Tensor x = leaf({-1.0, 4.0}, {2});
  Tensor cond = gt(x.detach(), zeros({}, DType::F64));
  // sqrt(-1) is NaN in the untaken branch; neither pass may see it.
  Tensor y = where(cond, sqrt(abs(x)), x);
  Tensor z = where(cond, x, zeros({}, DType::F64));
  sum(add(y, z)).backward();
  EXPECT_EQ(x.grad().at({0}), 1.0);
  EXPECT_NEAR(x.grad().at({1}), 1.0 + 0.25, 1e-12);
}

TEST(Autograd, RequiresGradOnlyOnFloatingLeaves) {
  Tensor i = from_indices({1, 2}, {2});
  EXPECT_THROW(i.set_requires_grad(true), Error);
  Tensor x = leaf({1.0}, {});
  Tensor y = exp(x);
  EXPECT_THROW(y.set_requires_grad(true), Error);
}

}  // namespace
}  // namespace attn
