// The per-element formulas of ops/optim_update/optim_update.h, shared by every device.
// They compute in double and round once when storing, so float32 parameters
// get each new value correctly rounded from the exact-in-double update.
#pragma once
#include <cmath>

#include "attn/ops/unary/unary_math.h"

namespace attn {
namespace optim_math {

// Step constants of Adam, computed once per parameter on the host.
struct AdamStep {
  double beta1, beta2, eps, step_size, inv_sqrt_c2;  // step_size = lr / (1 - b1^t)
};
struct AdadeltaStep {
  double lr, rho, eps;
};
struct MomentumStep {
  double lr, momentum;
};

template <class T>
ATTN_HD void adam(T& p, T g, T& m, T& v, const AdamStep& s) {
  const double gd = g;
  const double mn = s.beta1 * m + (1 - s.beta1) * gd;
  const double vn = s.beta2 * v + (1 - s.beta2) * gd * gd;
  m = static_cast<T>(mn);
  v = static_cast<T>(vn);
  p = static_cast<T>(p - s.step_size * mn / (std::sqrt(vn) * s.inv_sqrt_c2 + s.eps));
}

template <class T>
ATTN_HD void adadelta(T& p, T g, T& a, T& u, const AdadeltaStep& s) {
  const double gd = g;
  const double an = s.rho * a + (1 - s.rho) * gd * gd;
  const double d = std::sqrt(u + s.eps) / std::sqrt(an + s.eps) * gd;
  a = static_cast<T>(an);
  u = static_cast<T>(s.rho * u + (1 - s.rho) * d * d);
  p = static_cast<T>(p - s.lr * d);
}

template <class T>
ATTN_HD void momentum(T& p, T g, T& v, const MomentumStep& s) {
  const double vn = s.momentum * v + g;
  v = static_cast<T>(vn);
  p = static_cast<T>(p - s.lr * vn);
}

}  // namespace optim_math
}  // namespace attn
