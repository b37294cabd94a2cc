// Plain stochastic gradient descent, optionally with momentum:
// v = momentum * v + g;  p -= lr * v.
#pragma once
#include <vector>

#include "engine/tensor.h"

namespace attn {

class Sgd {
 public:
  Sgd(std::vector<Tensor> params, double lr, double momentum = 0.0);
  void step();       // parameters without a gradient are left alone
  void zero_grad();  // drops every parameter's gradient

 private:
  std::vector<Tensor> params_;
  std::vector<Tensor> velocity_;
  double lr_, momentum_;
};

}  // namespace attn
