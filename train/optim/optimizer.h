// The optimiser base: a list of parameters updated in place (the handles are
// shared with the modules that own them, so they are never replaced), per
// parameter state tensors ("slots": moments, accumulators), a learning rate,
// and gradient clipping by global norm. The trainer gives ReSAN two
// optimisers over disjoint parameter sets (split_parameters: the selection
// policy's, and the rest), checked by check_disjoint and stepped one after
// the other.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "attn/engine/tensor.h"

namespace attn {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

class Optimizer {
 public:
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;
  virtual ~Optimizer() = default;

  // One update of every parameter that has a gradient (others are left
  // alone and keep their state), run under NoGrad.
  void step();
  // Drops every parameter's gradient.
  void zero_grad();

  double lr() const { return lr_; }
  void set_lr(double lr);
  // Steps taken so far.
  int64_t step_count() const { return step_count_; }

  const std::vector<Tensor>& params() const { return params_; }
  const std::string& name() const { return name_; }

  // Every state tensor, named "step" (a float64 scalar: step_count()),
  // "<i>.step" (updates parameter i has had) and "<i>.<slot>" (i is the
  // parameter's index in params()). Slots not created yet are absent; slots
  // are copies (later steps do not change them). For checkpoints;
  // load_state restores exactly what state() returned.
  NamedTensors state() const;
  void load_state(const NamedTensors& state);

 protected:
  // `slot_names`: the per-parameter state tensors this optimiser keeps; each
  // is created as zeros shaped and typed like its parameter before the
  // parameter's first update.
  Optimizer(std::string name, std::vector<Tensor> params, double lr, std::vector<std::string> slot_names);

  // Updates `param` in place from `grad` (same shape and dtype). `slots` are
  // this parameter's state tensors in slot_names order (contiguous; updated
  // in place, one fused pass per parameter: ops/optim_update/optim_update.h), `t` is the 1-based count of updates this parameter has
  // had including this one. Called under NoGrad.
  virtual void update(const Tensor& param, const Tensor& grad, std::vector<Tensor>& slots, int64_t t) = 0;

 private:
  std::string name_;
  std::vector<Tensor> params_;
  double lr_;
  std::vector<std::string> slot_names_;
  std::vector<std::vector<Tensor>> slots_;  // [param][slot], empty until first update
  std::vector<int64_t> param_steps_;
  int64_t step_count_ = 0;
};

// Throws when two of the optimisers share a parameter (the same tensor).
void check_disjoint(const std::vector<const Optimizer*>& optimizers);

// Named parameters split by a predicate on the name: `selected` where it
// holds, `rest` elsewhere, both in the original order.
struct ParameterSplit {
  NamedTensors selected, rest;
};
ParameterSplit split_parameters(const NamedTensors& named, const std::function<bool(const std::string&)>& predicate);
// The tensors of named parameters, in order.
std::vector<Tensor> tensors_of(const NamedTensors& named);

// Scales every gradient by max_norm / norm when the global L2 norm of all
// gradients (parameters without one are skipped) exceeds max_norm, and
// returns that pre-clip norm. Gradients are immutable on the tape, so each is
// replaced by a scaled copy (set_grad). A non-finite norm is returned with
// the gradients left untouched, so the caller can skip the step.
double clip_grad_norm(const std::vector<Tensor>& params, double max_norm);

}  // namespace attn
