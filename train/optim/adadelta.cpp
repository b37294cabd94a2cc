#include "attn/train/optim/adadelta.h"

#include "attn/engine/error.h"
#include "attn/ops/optim_update/optim_update.h"

namespace attn {

Adadelta::Adadelta(std::vector<Tensor> params, const AdadeltaOptions& options)
    : Optimizer("Adadelta", std::move(params), options.lr, {"accum", "accum_update"}), options_(options) {
  ATTN_CHECK(options.rho >= 0 && options.rho < 1, "Adadelta", "rho must be in [0, 1), got ", options.rho);
  ATTN_CHECK(options.eps > 0, "Adadelta", "eps must be positive, got ", options.eps);
}

void Adadelta::update(const Tensor& param, const Tensor& grad, std::vector<Tensor>& slots, int64_t) {
  adadelta_update_(param, grad, slots[0], slots[1], lr(), options_.rho, options_.eps);
}

}  // namespace attn
