// The fused in-place optimiser updates (ops/optim_update/optim_update.h) against the
// composed tensor-op form they replaced, from identical starting states, one
// step at a time, in float64 and float32; and their input checks.
//
// Tolerances, with u the unit roundoff of the dtype (2^-53 or 2^-24): the
// fused kernels compute each element in double and round once (u relative);
// the composed form rounds every intermediate to the dtype. Counting first-
// order rounding errors of the composed form (each scalar constant cast to
// the dtype is one more):
//   Adam m = b1 m + (1 - b1) g:            3u of S = |b1 m| + |(1 - b1) g|
//   Adam v = b2 v + (1 - b2) g^2:          4u of S = |b2 v| + |(1 - b2) g^2|
//   Adam step (lr/c1) m / (sqrt(v)/sqrt(c2) + eps): 2u (sqrt v) + 6u = 8u of
//     |step|, plus m's own error carried through: 3u of (lr/c1) S_m / denom
//   Adadelta a as Adam v:                  4u of S
//   Adadelta d = sqrt(u + eps) / sqrt(a + eps) g: 1.5u + 1.5u + 2u (a) + 2u = 7u of |d|
//   Adadelta u = rho u + (1 - rho) d^2:    3u + 2 * 7u = 17u of S
//   parameter p - lr d:                    7u + 2u of |lr d|
//   momentum v = m v + g:                  3u of S;  p - lr v: 2u of |lr v|
//     plus v's own error carried through: 3u of lr S
// plus, for every value, the final rounding of each side (u of the result
// twice). The asserted bounds are these counts, rounded up to whole units.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "attn/engine/autograd.h"
#include "attn/engine/error.h"
#include "attn/ops/binary/binary.h"
#include "attn/ops/optim_update/optim_update.h"
#include "attn/ops/unary/unary.h"
#include "attn/ops/view/view.h"

namespace attn {
namespace {

double unit_roundoff(DType dtype) { return dtype == DType::F64 ? std::ldexp(1.0, -53) : std::ldexp(1.0, -24); }

std::vector<double> random_values(size_t n, double lo, double hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> d(lo, hi);
  std::vector<double> out(n);
  for (double& x : out) x = d(rng);
  return out;
}

Tensor tensor_of(const std::vector<double>& v, DType dtype) {
  return from_vector(v, {static_cast<int64_t>(v.size())}, dtype);
}

// Asserts |fused - composed| <= bound[i] + 2u |composed| elementwise (the
// last term: each side's final rounding).
void expect_close(const Tensor& fused, const Tensor& composed, const std::vector<double>& bound, const char* what) {
  const double u = unit_roundoff(fused.dtype());
  const std::vector<double> f = fused.to_vector(), c = composed.to_vector();
  for (size_t i = 0; i < f.size(); ++i)
    ASSERT_LE(std::abs(f[i] - c[i]), bound[i] + 2 * u * std::abs(c[i]))
        << what << "[" << i << "] fused " << f[i] << " composed " << c[i] << " (" << dtype_name(fused.dtype()) << ")";
}

// units * u * scale[i], elementwise.
std::vector<double> units_of(double units, DType dtype, std::vector<double> scale) {
  for (double& x : scale) x *= units * unit_roundoff(dtype);
  return scale;
}

class OptimUpdate : public ::testing::TestWithParam<DType> {
 protected:
  static constexpr size_t kN = 50000;  // above the parallel grain: the threaded path runs too
  std::vector<double> p0 = random_values(kN, -2, 2, 1), g = random_values(kN, -3, 3, 2);
  std::vector<double> s0 = random_values(kN, -0.5, 0.5, 3), s1 = random_values(kN, 0, 0.2, 4);
};

TEST_P(OptimUpdate, AdamMatchesTheComposedForm) {
  const DType dt = GetParam();
  NoGrad no_grad;
  const double lr = 0.01, b1 = 0.9, b2 = 0.999, eps = 1e-8;
  const int64_t t = 3;
  Tensor p = tensor_of(p0, dt), m = tensor_of(s0, dt), v = tensor_of(s1, dt), grad = tensor_of(g, dt);
  adam_update_(p, grad, m, v, AdamHyper{lr, b1, b2, eps, t});

  // The composed form (train/optim/adam.cpp before the fused update).
  Tensor pc = tensor_of(p0, dt), gc = tensor_of(g, dt);
  Tensor mc = mul_scalar(tensor_of(s0, dt), b1);
  axpy_(mc, 1 - b1, gc);
  Tensor vc = mul_scalar(tensor_of(s1, dt), b2);
  axpy_(vc, 1 - b2, mul(gc, gc));
  const double c1 = 1 - std::pow(b1, double(t)), c2 = 1 - std::pow(b2, double(t));
  Tensor denom = add_scalar(mul_scalar(sqrt(vc), 1.0 / std::sqrt(c2)), eps);
  Tensor step = mul_scalar(div(mc, denom), lr / c1);
  axpy_(pc, -1.0, step);

  const double u = unit_roundoff(dt);
  const std::vector<double> st = step.to_vector(), dn = denom.to_vector();
  std::vector<double> sm(kN), sv(kN), tp(kN);
  for (size_t i = 0; i < kN; ++i) {
    sm[i] = std::abs(b1 * s0[i]) + std::abs((1 - b1) * g[i]);
    sv[i] = std::abs(b2 * s1[i]) + std::abs((1 - b2) * g[i] * g[i]);
    tp[i] = 8 * u * std::abs(st[i]) + 3 * u * lr / c1 * sm[i] / dn[i];
  }
  expect_close(m, mc, units_of(3, dt, sm), "m");
  expect_close(v, vc, units_of(4, dt, sv), "v");
  expect_close(p, pc, tp, "p");
}

TEST_P(OptimUpdate, AdadeltaMatchesTheComposedForm) {
  const DType dt = GetParam();
  NoGrad no_grad;
  const double lr = 0.5, rho = 0.95, eps = 1e-6;
  std::vector<double> a0 = random_values(kN, 0, 1, 5);
  Tensor p = tensor_of(p0, dt), a = tensor_of(a0, dt), u = tensor_of(s1, dt), grad = tensor_of(g, dt);
  adadelta_update_(p, grad, a, u, lr, rho, eps);

  // The composed form (train/optim/adadelta.cpp before the fused update).
  Tensor pc = tensor_of(p0, dt), gc = tensor_of(g, dt), u0 = tensor_of(s1, dt);
  Tensor ac = mul_scalar(tensor_of(a0, dt), rho);
  axpy_(ac, 1 - rho, mul(gc, gc));
  Tensor upd = mul(div(sqrt(add_scalar(u0, eps)), sqrt(add_scalar(ac, eps))), gc);
  Tensor uc = mul_scalar(u0, rho);
  axpy_(uc, 1 - rho, mul(upd, upd));
  axpy_(pc, -lr, upd);

  const std::vector<double> d = upd.to_vector();
  std::vector<double> sa(kN), su(kN), sp(kN);
  for (size_t i = 0; i < kN; ++i) {
    sa[i] = std::abs(rho * a0[i]) + std::abs((1 - rho) * g[i] * g[i]);
    su[i] = std::abs(rho * s1[i]) + std::abs((1 - rho) * d[i] * d[i]);
    sp[i] = std::abs(lr * d[i]);
  }
  expect_close(a, ac, units_of(4, dt, sa), "accum");
  expect_close(u, uc, units_of(17, dt, su), "accum_update");
  expect_close(p, pc, units_of(9, dt, sp), "p");
}

TEST_P(OptimUpdate, MomentumMatchesTheComposedForm) {
  const DType dt = GetParam();
  NoGrad no_grad;
  const double lr = 0.1, momentum = 0.9;
  Tensor p = tensor_of(p0, dt), v = tensor_of(s0, dt), grad = tensor_of(g, dt);
  sgd_momentum_update_(p, grad, v, lr, momentum);

  // The composed form (train/optim/sgd.cpp before the fused update).
  Tensor pc = tensor_of(p0, dt), gc = tensor_of(g, dt);
  Tensor vc = mul_scalar(tensor_of(s0, dt), momentum);
  axpy_(vc, 1.0, gc);
  axpy_(pc, -lr, vc);

  const std::vector<double> vv = vc.to_vector();
  const double u = unit_roundoff(dt);
  std::vector<double> sv(kN), tp(kN);
  for (size_t i = 0; i < kN; ++i) {
    sv[i] = std::abs(momentum * s0[i]) + std::abs(g[i]);
    tp[i] = 2 * u * std::abs(lr * vv[i]) + 3 * u * lr * sv[i];
  }
  expect_close(v, vc, units_of(3, dt, sv), "velocity");
  expect_close(p, pc, tp, "p");
}

INSTANTIATE_TEST_SUITE_P(Dtypes, OptimUpdate, ::testing::Values(DType::F64, DType::F32),
                         [](const ::testing::TestParamInfo<DType>& info) { return dtype_name(info.param); });

TEST(OptimUpdateChecks, MismatchedOrNonContiguousStateIsAClearError) {
  NoGrad no_grad;
  Tensor p = zeros({2, 3}, DType::F32), g = ones({2, 3}, DType::F32);
  Tensor v = zeros({2, 3}, DType::F32);
  try {
    sgd_momentum_update_(p, g, zeros({3, 2}, DType::F32), 0.1, 0.9);
    FAIL() << "expected a shape error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("velocity is [3, 2]"), std::string::npos) << e.what();
  }
  EXPECT_THROW(adam_update_(p, g, v, zeros({2, 3}, DType::F64), AdamHyper{0.1, 0.9, 0.99, 1e-8, 1}), Error);
  try {
    adam_update_(p, g, v, transpose(zeros({3, 2}, DType::F32), 0, 1), AdamHyper{0.1, 0.9, 0.99, 1e-8, 1});
    FAIL() << "expected a contiguity error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("must be contiguous"), std::string::npos) << e.what();
  }
  EXPECT_THROW(adam_update_(p, g, v, zeros({2, 3}, DType::F32), AdamHyper{0.1, 0.9, 0.99, 1e-8, 0}), Error);
  EXPECT_THROW(sgd_momentum_update_(p, ones({2, 2}, DType::F32), v, 0.1, 0.9), Error);
}

TEST(OptimUpdateChecks, NonContiguousGradientIsRead) {
  NoGrad no_grad;
  Tensor p = zeros({2, 3}, DType::F64), v = zeros({2, 3}, DType::F64);
  Tensor gt = from_vector({1, 2, 3, 4, 5, 6}, {3, 2}, DType::F64);  // its transpose is [[1, 3, 5], [2, 4, 6]]
  sgd_momentum_update_(p, transpose(gt, 0, 1), v, 1.0, 0.5);
  EXPECT_EQ(v.to_vector(), (std::vector<double>{1, 3, 5, 2, 4, 6}));
  EXPECT_EQ(p.to_vector(), (std::vector<double>{-1, -3, -5, -2, -4, -6}));
}

}  // namespace
}  // namespace attn
