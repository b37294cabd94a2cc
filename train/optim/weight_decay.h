// L2 weight decay as a differentiable penalty added to the loss:
//   penalty = gamma * sum over covered W of 0.5 * ||W||^2   (gradient gamma * W)
// Covered by default: weight matrices only, i.e. parameters whose name is
// "weight" or ends in ".weight" and whose rank is >= 2, except embeddings
// (names containing "embedding"). Biases, gains and vectors are never
// covered. Any parameter can opt out by name (e.g. DiSAN's ".w1.weight" and
// ".w2.weight", which the original code leaves undecayed).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "attn/train/optim/optimizer.h"

namespace attn {

struct WeightDecayOptions {
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

  // gamma * 0.5 * sum ||W||^2 over the covered parameters: a differentiable
  // scalar (dtype of the first covered parameter; a zero float32 scalar when
  // none is covered or gamma is 0).
  Tensor penalty() const;
  std::vector<std::string> covered_names() const { return names_; }
  double gamma() const { return gamma_; }

 private:
  double gamma_;
  std::vector<std::string> names_;
  std::vector<Tensor> params_;
};

// Whether the default rules (plus the options' opt-outs) cover one parameter.
bool weight_decay_covers(const std::string& name, const Tensor& param, const WeightDecayOptions& options);

}  // namespace attn
