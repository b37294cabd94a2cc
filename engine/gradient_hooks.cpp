#include "attn/engine/gradient_hooks.h"

#include <algorithm>

#include "attn/engine/autograd.h"
#include "attn/engine/error.h"

namespace attn {

void HookHandle::remove() {
  std::shared_ptr<GradientHookList> list = list_.lock();
  if (!list) return;
  auto& hooks = list->hooks;
  hooks.erase(std::remove_if(hooks.begin(), hooks.end(), [this](const auto& h) { return h.first == id_; }),
              hooks.end());
  list_.reset();
}

HookHandle register_gradient_hook(const Tensor& t, GradientHook hook) {
  ATTN_CHECK(t.defined(), "register_hook", "the tensor is undefined");
  ATTN_CHECK(t.requires_grad(), "register_hook",
             "the tensor does not require grad, so no gradient will ever reach the hook (call set_requires_grad() on a "
             "leaf, or register on the result of an op whose inputs require grad)");
  ATTN_CHECK(hook != nullptr, "register_hook", "the hook is empty");
  std::shared_ptr<GradientHookList>& list = t.is_leaf() ? t.impl()->grad_hooks : t.grad_fn()->grad_hooks;
  if (!list) list = std::make_shared<GradientHookList>();
  const uint64_t id = list->next_id++;
  list->hooks.emplace_back(id, std::move(hook));
  return HookHandle(list, id);
}

Tensor run_gradient_hooks(const GradientHookList& hooks, Tensor grad, const std::string& owner) {
  // A hook may remove itself or register another while running: iterate a copy.
  const auto snapshot = hooks.hooks;
  for (const auto& entry : snapshot) {
    Tensor replaced = entry.second(grad);
    if (!replaced.defined()) continue;
    ATTN_CHECK(replaced.shape() == grad.shape(), "backward", "a gradient hook on ", owner, " returned shape ",
               shape_str(replaced.shape()), " for a gradient of shape ", shape_str(grad.shape()));
    ATTN_CHECK(replaced.dtype() == grad.dtype(), "backward", "a gradient hook on ", owner, " returned dtype ",
               dtype_name(replaced.dtype()), " for a gradient of dtype ",
               dtype_name(grad.dtype()));
    ATTN_CHECK(replaced.device() == grad.device(), "backward", "a gradient hook on ", owner, " returned a tensor on ",
               device_name(replaced.device()), " for a gradient on ",
               device_name(grad.device()));
    grad = replaced;
  }
  return grad;
}

}  // namespace attn
