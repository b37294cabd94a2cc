// Adadelta (Zeiler 2012) with a learning-rate multiplier, as TensorFlow's
// AdadeltaOptimizer (which the DiSAN/ReSAN code uses, with lr 0.5):
//   accum        = rho accum + (1 - rho) g^2
//   update       = sqrt(accum_update + eps) / sqrt(accum + eps) * g
//   accum_update = rho accum_update + (1 - rho) update^2
//   p -= lr * update
#pragma once
#include <vector>

#include "attn/train/optim/optimizer.h"

namespace attn {

struct AdadeltaOptions {
  double lr = 0.5;
  double rho = 0.95;
  double eps = 1e-8;
};

class Adadelta : public Optimizer {
 public:
  explicit Adadelta(std::vector<Tensor> params, const AdadeltaOptions& options = {});
  const AdadeltaOptions& options() const { return options_; }

 protected:
  void update(const Tensor& param, const Tensor& grad, std::vector<Tensor>& slots, int64_t t) override;

 private:
  AdadeltaOptions options_;
};

}  // namespace attn
