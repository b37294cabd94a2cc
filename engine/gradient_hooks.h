// Gradient hooks: a function registered on a tensor is called with that
// tensor's gradient during backward and may inspect it (return an undefined
// Tensor to keep it) or replace it (return a tensor of the same shape, dtype
// and device).
//
// When a hook runs:
//  - on a non-leaf tensor, once per backward pass, with the total gradient
//    of that tensor (every consumer's contribution summed), before the
//    backward formula of the op that produced it runs: a replacement flows on
//    to that op's inputs;
//  - on a leaf (a parameter or an input), once per backward pass, with the
//    sum of the contributions of that pass, before it is added into grad():
//    a replacement is what gets accumulated.
// Hooks of one tensor run in the order they were registered, each seeing
// what the previous one returned. They run with gradient recording off, as
// backward formulas do.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "attn/engine/tensor.h"

namespace attn {

using GradientHook = std::function<Tensor(const Tensor& grad)>;

// The hooks of one tensor. A leaf keeps its list on its TensorImpl, a
// non-leaf on the Node that produced it.
struct GradientHookList {
  std::vector<std::pair<uint64_t, GradientHook>> hooks;
  uint64_t next_id = 0;
};

// Returned by register_gradient_hook; remove() unregisters the hook (a no-op
// once the tensor or its graph is gone, or when called twice).
class HookHandle {
 public:
  HookHandle() = default;
  HookHandle(std::weak_ptr<GradientHookList> list, uint64_t id) : list_(std::move(list)), id_(id) {}
  void remove();

 private:
  std::weak_ptr<GradientHookList> list_;
  uint64_t id_ = 0;
};

// Registers `hook` on `t`, which must require grad (a leaf marked with
// set_requires_grad, or the result of a recorded op).
HookHandle register_gradient_hook(const Tensor& t, GradientHook hook);

// Runs `hooks` on `grad` in order; checks each replacement's shape, dtype
// and device against `grad`. `owner` names the tensor in errors ("the output
// of 'matmul'", "a leaf of shape [3, 4]").
Tensor run_gradient_hooks(const GradientHookList& hooks, Tensor grad, const std::string& owner);

}  // namespace attn
