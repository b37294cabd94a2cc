#include "attn/train/optim/sgd.h"

#include <cmath>

#include "attn/engine/error.h"
#include "attn/ops/binary/binary.h"
#include "attn/ops/optim_update/optim_update.h"

namespace attn {

namespace {
// Plain SGD keeps no state; with momentum, one velocity per parameter.
std::vector<std::string> sgd_slots(double momentum) {
  if (momentum == 0.0) return {};
  return {"velocity"};
}
}  // namespace

Sgd::Sgd(std::vector<Tensor> params, double lr, double momentum)
    : Optimizer("Sgd", std::move(params), lr, sgd_slots(momentum)), momentum_(momentum) {
  ATTN_CHECK(std::isfinite(momentum) && momentum >= 0 && momentum < 1, "Sgd", "momentum must be in [0, 1), got ",
             momentum);
}

void Sgd::update(const Tensor& param, const Tensor& grad, std::vector<Tensor>& slots, int64_t) {
  if (slots.empty()) {
    axpy_(param, -lr(), grad);
    return;
  }
  sgd_momentum_update_(param, grad, slots[0], lr(), momentum_);
}

}  // namespace attn
