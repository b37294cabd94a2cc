// An optimiser chosen by name, as `attn train --optimizer` spells it.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "attn/train/optim/optimizer.h"

namespace attn {

// "adam", "adadelta" or "sgd" (momentum 0.9) over `params`; `lr` 0 takes the
// optimiser's default (adam 1e-3, adadelta 0.5, sgd 0.1). Another name throws.
std::unique_ptr<Optimizer> make_optimizer(const std::string& name, std::vector<Tensor> params, double lr);

}  // namespace attn
