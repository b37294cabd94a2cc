#include "attn/train/optim/adam.h"

#include "attn/engine/error.h"
#include "attn/ops/optim_update/optim_update.h"

namespace attn {

Adam::Adam(std::vector<Tensor> params, const AdamOptions& options)
    : Optimizer("Adam", std::move(params), options.lr, {"m", "v"}), options_(options) {
  ATTN_CHECK(options.beta1 >= 0 && options.beta1 < 1, "Adam", "beta1 must be in [0, 1), got ", options.beta1);
  ATTN_CHECK(options.beta2 >= 0 && options.beta2 < 1, "Adam", "beta2 must be in [0, 1), got ", options.beta2);
  ATTN_CHECK(options.eps > 0, "Adam", "eps must be positive, got ", options.eps);
}

void Adam::update(const Tensor& param, const Tensor& grad, std::vector<Tensor>& slots, int64_t t) {
  adam_update_(param, grad, slots[0], slots[1], AdamHyper{lr(), options_.beta1, options_.beta2, options_.eps, t});
}

}  // namespace attn
