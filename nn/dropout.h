// Dropout parameterised, as in the papers, by the keep probability. Active
// only in training mode; draws its masks from a generator the model owns.
#pragma once
#include "attn/engine/random.h"
#include "attn/nn/module.h"

namespace attn {

class Dropout : public Module {
 public:
  Dropout(double keep_prob, Generator& gen);
  Tensor forward(const Tensor& x) const;
  Tensor operator()(const Tensor& x) const { return forward(x); }
  double keep_prob() const { return keep_prob_; }

 private:
  double keep_prob_;
  Generator* gen_;
};

}  // namespace attn
