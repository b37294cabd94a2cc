#include "train/sgd.h"

#include "engine/autograd.h"
#include "engine/error.h"
#include "ops/binary.h"
#include "ops/copy.h"
#include "ops/unary.h"

namespace attn {

Sgd::Sgd(std::vector<Tensor> params, double lr, double momentum)
    : params_(std::move(params)), velocity_(params_.size()), lr_(lr), momentum_(momentum) {
  for (const Tensor& p : params_)
    ATTN_CHECK(p.is_leaf() && p.requires_grad(), "Sgd", "every parameter must be a leaf that requires grad");
}

void Sgd::step() {
  NoGrad no_grad;
  for (size_t i = 0; i < params_.size(); ++i) {
    Tensor g = params_[i].grad();
    if (!g.defined()) continue;
    if (momentum_ == 0.0) {
      axpy_(params_[i], -lr_, g);
      continue;
    }
    if (!velocity_[i].defined()) velocity_[i] = zeros(g.shape(), g.dtype(), g.device());
    Tensor scaled = mul_scalar(velocity_[i], momentum_);
    axpy_(scaled, 1.0, g);
    velocity_[i] = scaled;
    axpy_(params_[i], -lr_, velocity_[i]);
  }
}

void Sgd::zero_grad() {
  for (const Tensor& p : params_) p.zero_grad();
}

}  // namespace attn
