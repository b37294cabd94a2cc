// A module's parameters as names for graph_dot (engine/graph_dot.h): the
// engine knows tensors, the module knows their stable names, so the map is
// made here, one layer above the engine.
#pragma once
#include "attn/engine/graph_dot.h"
#include "attn/nn/module.h"

namespace attn {

// Every parameter of `module` by identity, named as named_parameters() names it.
TensorNames parameter_names(const Module& module);

// The graph behind `root` with `module`'s parameters drawn by name.
GraphDot graph_dot(const Tensor& root, const Module& module);

}  // namespace attn
