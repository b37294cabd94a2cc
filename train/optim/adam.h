// Adam (Kingma & Ba 2015, Algorithm 1) with bias correction:
//   m = beta1 m + (1 - beta1) g,   v = beta2 v + (1 - beta2) g^2
//   p -= lr * (m / (1 - beta1^t)) / (sqrt(v / (1 - beta2^t)) + eps)
// t counts the updates this parameter has had (a parameter skipped for lack
// of a gradient does not advance its own t).
#pragma once
#include <vector>

#include "attn/train/optim/optimizer.h"

namespace attn {

struct AdamOptions {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
};

class Adam : public Optimizer {
 public:
  explicit Adam(std::vector<Tensor> params, const AdamOptions& options = {});
  const AdamOptions& options() const { return options_; }

 protected:
  void update(const Tensor& param, const Tensor& grad, std::vector<Tensor>& slots, int64_t t) override;

 private:
  AdamOptions options_;
};

}  // namespace attn
