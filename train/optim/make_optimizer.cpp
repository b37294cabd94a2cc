#include "attn/train/optim/make_optimizer.h"

#include "attn/engine/error.h"
#include "attn/train/optim/adadelta.h"
#include "attn/train/optim/adam.h"
#include "attn/train/optim/sgd.h"

namespace attn {

std::unique_ptr<Optimizer> make_optimizer(const std::string& name, std::vector<Tensor> params, double lr) {
  if (name == "adam") {
    AdamOptions o;
    if (lr > 0) o.lr = lr;
    return std::make_unique<Adam>(std::move(params), o);
  }
  if (name == "adadelta") {
    AdadeltaOptions o;
    if (lr > 0) o.lr = lr;
    return std::make_unique<Adadelta>(std::move(params), o);
  }
  if (name == "sgd") return std::make_unique<Sgd>(std::move(params), lr > 0 ? lr : 0.1, 0.9);
  ATTN_CHECK(false, "train", "unknown optimizer '", name, "' (known: adam, adadelta, sgd)");
  return nullptr;
}

}  // namespace attn
