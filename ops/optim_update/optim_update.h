// Fused in-place optimiser updates: each reads a parameter's gradient once and
// rewrites the parameter and its state tensors in the same pass, with no
// temporary tensors (the composed tensor-op form allocated about six
// parameter-sized temporaries per parameter per step). Not differentiable;
// the caller runs them under NoGrad. The parameter and state tensors must be
// contiguous, of the parameter's shape, dtype and device; a non-contiguous
// gradient is copied to a contiguous one first.
#pragma once
#include "attn/engine/tensor.h"

namespace attn {

// Adam (Kingma & Ba, Algorithm 1) at 1-based step t:
//   m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2
//   p -= lr / (1 - b1^t) * m / (sqrt(v / (1 - b2^t)) + eps)
struct AdamHyper {
  double lr, beta1, beta2, eps;
  int64_t t;
};
void adam_update_(const Tensor& param, const Tensor& grad, const Tensor& m, const Tensor& v, const AdamHyper& h);

// Adadelta (Zeiler 2012, Algorithm 1):
//   a = rho a + (1 - rho) g^2;  d = sqrt(u + eps) / sqrt(a + eps) g
//   u = rho u + (1 - rho) d^2;  p -= lr d
void adadelta_update_(const Tensor& param, const Tensor& grad, const Tensor& accum, const Tensor& accum_update,
                      double lr, double rho, double eps);

// SGD with momentum: v = momentum v + g;  p -= lr v.
void sgd_momentum_update_(const Tensor& param, const Tensor& grad, const Tensor& velocity, double lr,
                          double momentum);

}  // namespace attn
