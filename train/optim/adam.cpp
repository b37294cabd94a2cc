#include "attn/train/optim/adam.h"

#include <cmath>

#include "attn/engine/error.h"
#include "attn/ops/binary.h"
#include "attn/ops/unary.h"

namespace attn {

Adam::Adam(std::vector<Tensor> params, const AdamOptions& options)
    : Optimizer("Adam", std::move(params), options.lr, {"m", "v"}), options_(options) {
  ATTN_CHECK(options.beta1 >= 0 && options.beta1 < 1, "Adam", "beta1 must be in [0, 1), got ", options.beta1);
  ATTN_CHECK(options.beta2 >= 0 && options.beta2 < 1, "Adam", "beta2 must be in [0, 1), got ", options.beta2);
  ATTN_CHECK(options.eps > 0, "Adam", "eps must be positive, got ", options.eps);
}

void Adam::update(const Tensor& param, const Tensor& grad, std::vector<Tensor>& slots, int64_t t) {
  const double b1 = options_.beta1, b2 = options_.beta2;
  Tensor m = mul_scalar(slots[0], b1);
  axpy_(m, 1 - b1, grad);
  Tensor v = mul_scalar(slots[1], b2);
  axpy_(v, 1 - b2, mul(grad, grad));
  slots[0] = m;
  slots[1] = v;
  const double c1 = 1 - std::pow(b1, static_cast<double>(t));
  const double c2 = 1 - std::pow(b2, static_cast<double>(t));
  // sqrt(v / c2) + eps, then the step m / c1 / that.
  Tensor denom = add_scalar(mul_scalar(sqrt(v), 1.0 / std::sqrt(c2)), options_.eps);
  axpy_(param, -lr() / c1, div(m, denom));
}

}  // namespace attn
