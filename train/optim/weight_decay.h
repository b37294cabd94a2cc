// L2 weight decay as a differentiable penalty added to the loss:
//   penalty = factor * gamma * sum over covered W of ||W||^2
// factor 1 is the papers' "gamma ||theta||^2" (gradient 2 gamma W); 0.5 is
// TensorFlow's l2_loss, which the released code used (gradient gamma W).
// Covered: every parameter (all_parameters, the papers' "to all the model"),
// or weight matrices only, i.e. parameters whose name is "weight" or ends in
// ".weight" and whose rank is >= 2, except embeddings (names containing
// "embedding"). Any parameter can opt out by name (e.g. DiSAN's ".w1.weight"
// and ".w2.weight", which the original code leaves undecayed).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "attn/train/optim/optimizer.h"

namespace attn {

struct WeightDecayOptions {
  bool all_parameters = false;  // true: every parameter (opt-outs still apply)
  double factor = 0.5;          // penalty = factor * gamma * ||W||^2
  std::string weight_suffix = ".weight";  // a bare "weight" (no dot) also matches
  int64_t min_rank = 2;
  // A name containing any of these is excluded.
  std::vector<std::string> exclude_substrings = {"embedding"};
  // A name ending in any of these is excluded (e.g. ".w1.weight").
  std::vector<std::string> exclude_suffixes;
  // Optional further opt-out: true excludes the parameter.
  std::function<bool(const std::string& name)> exclude;
};

class WeightDecay {
 public:
  WeightDecay(const NamedTensors& named_params, double gamma, const WeightDecayOptions& options = {});

  // factor * gamma * sum ||W||^2 over the covered parameters: a differentiable
  // scalar (dtype of the first covered parameter; a zero float32 scalar when
  // none is covered or gamma is 0).
  Tensor penalty() const;
  std::vector<std::string> covered_names() const { return names_; }
  double gamma() const { return gamma_; }

 private:
  double gamma_, factor_;
  std::vector<std::string> names_;
  std::vector<Tensor> params_;
};

// Whether the default rules (plus the options' opt-outs) cover one parameter.
bool weight_decay_covers(const std::string& name, const Tensor& param, const WeightDecayOptions& options);

}  // namespace attn
