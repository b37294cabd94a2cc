#include "attn/nn/module.h"

#include "attn/engine/error.h"
#include "attn/engine/copy.h"

namespace attn {

std::vector<std::pair<std::string, Tensor>> Module::named(bool with_buffers) const {
  std::vector<std::pair<std::string, Tensor>> out(params_.begin(), params_.end());
  if (with_buffers) out.insert(out.end(), buffers_.begin(), buffers_.end());
  for (const auto& [name, child] : children_)
    for (auto& [sub, t] : child->named(with_buffers)) out.emplace_back(name + "." + sub, t);
  return out;
}

std::vector<std::pair<std::string, Tensor>> Module::named_parameters() const { return named(false); }
std::vector<std::pair<std::string, Tensor>> Module::named_state() const { return named(true); }

std::vector<Tensor> Module::parameters() const {
  std::vector<Tensor> out;
  for (auto& [name, t] : named_parameters()) out.push_back(t);
  return out;
}

int64_t Module::parameter_count() const {
  int64_t n = 0;
  for (const Tensor& t : parameters()) n += t.numel();
  return n;
}

Module& Module::to(Device device) {
  for (auto& [name, t] : named_state()) {
    if (t.device() == device) continue;  // also a tensor shared by two modules, moved once
    Tensor moved = to_device(t.detach(), device);  // contiguous, no history
    TensorImpl* impl = t.impl();
    impl->storage = moved.storage();
    impl->strides = moved.strides();
    impl->offset = moved.offset();
    if (impl->grad.defined()) impl->grad = to_device(impl->grad.detach(), device);
  }
  return *this;
}

void Module::set_training(bool training) {
  training_ = training;
  for (auto& [name, child] : children_) child->set_training(training);
}

void Module::check_new_name(const std::string& name) const {
  ATTN_CHECK(!name.empty() && name.find('.') == std::string::npos, "Module", "invalid name '", name,
             "' (non-empty, no dots)");
  for (const auto& [n, t] : params_) ATTN_CHECK(n != name, "Module", "name '", name, "' registered twice");
  for (const auto& [n, t] : buffers_) ATTN_CHECK(n != name, "Module", "name '", name, "' registered twice");
  for (const auto& [n, c] : children_) ATTN_CHECK(n != name, "Module", "name '", name, "' registered twice");
}

Tensor Module::register_parameter(const std::string& name, Tensor value) {
  check_new_name(name);
  value.set_requires_grad(true);
  params_.emplace_back(name, value);
  return value;
}

Tensor Module::register_buffer(const std::string& name, Tensor value) {
  check_new_name(name);
  buffers_.emplace_back(name, value);
  return value;
}

void Module::register_module(const std::string& name, Module& child) {
  check_new_name(name);
  children_.emplace_back(name, &child);
}

}  // namespace attn
