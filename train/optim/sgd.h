// Stochastic gradient descent, optionally with momentum (heavy ball, the
// PyTorch/TensorFlow form): v = momentum * v + g;  p -= lr * v.
#pragma once
#include <vector>

#include "attn/train/optim/optimizer.h"

namespace attn {

class Sgd : public Optimizer {
 public:
  Sgd(std::vector<Tensor> params, double lr, double momentum = 0.0);
  double momentum() const { return momentum_; }

 protected:
  void update(const Tensor& param, const Tensor& grad, std::vector<Tensor>& slots, int64_t t) override;

 private:
  double momentum_;
};

}  // namespace attn
