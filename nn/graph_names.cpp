#include "attn/nn/graph_names.h"

namespace attn {

TensorNames parameter_names(const Module& module) {
  TensorNames names;
  for (const auto& [name, t] : module.named_parameters()) names.emplace(t.impl(), name);
  return names;
}

GraphDot graph_dot(const Tensor& root, const Module& module) { return graph_dot(root, parameter_names(module)); }

}  // namespace attn
