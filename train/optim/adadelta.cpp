#include "attn/train/optim/adadelta.h"

#include "attn/engine/error.h"
#include "attn/ops/binary.h"
#include "attn/ops/unary.h"

namespace attn {

Adadelta::Adadelta(std::vector<Tensor> params, const AdadeltaOptions& options)
    : Optimizer("Adadelta", std::move(params), options.lr, {"accum", "accum_update"}), options_(options) {
  ATTN_CHECK(options.rho >= 0 && options.rho < 1, "Adadelta", "rho must be in [0, 1), got ", options.rho);
  ATTN_CHECK(options.eps > 0, "Adadelta", "eps must be positive, got ", options.eps);
}

void Adadelta::update(const Tensor& param, const Tensor& grad, std::vector<Tensor>& slots, int64_t) {
  const double rho = options_.rho, eps = options_.eps;
  Tensor accum = mul_scalar(slots[0], rho);
  axpy_(accum, 1 - rho, mul(grad, grad));
  Tensor upd = mul(div(sqrt(add_scalar(slots[1], eps)), sqrt(add_scalar(accum, eps))), grad);
  Tensor accum_update = mul_scalar(slots[1], rho);
  axpy_(accum_update, 1 - rho, mul(upd, upd));
  slots[0] = accum;
  slots[1] = accum_update;
  axpy_(param, -lr(), upd);
}

}  // namespace attn
