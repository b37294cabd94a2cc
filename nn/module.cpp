#include "nn/module.h"

#include "engine/error.h"

namespace attn {

namespace {
void collect(const std::string& prefix, const std::vector<std::pair<std::string, Tensor>>& params,
             std::vector<std::pair<std::string, Tensor>>& out) {
  for (const auto& [name, t] : params) out.emplace_back(prefix + name, t);
}
}  // namespace

std::vector<std::pair<std::string, Tensor>> Module::named_parameters() const {
  std::vector<std::pair<std::string, Tensor>> out;
  collect("", params_, out);
  for (const auto& [name, child] : children_)
    for (auto& [sub, t] : child->named_parameters()) out.emplace_back(name + "." + sub, t);
  return out;
}

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

void Module::set_training(bool training) {
  training_ = training;
  for (auto& [name, child] : children_) child->set_training(training);
}

Tensor Module::register_parameter(const std::string& name, Tensor value) {
  for (const auto& [existing, t] : params_)
    ATTN_CHECK(existing != name, "Module", "parameter '", name, "' registered twice");
  value.set_requires_grad(true);
  params_.emplace_back(name, value);
  return value;
}

void Module::register_module(const std::string& name, Module& child) {
  for (const auto& [existing, c] : children_)
    ATTN_CHECK(existing != name, "Module", "child module '", name, "' registered twice");
  children_.emplace_back(name, &child);
}

}  // namespace attn
