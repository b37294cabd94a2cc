// The autograd graph behind a tensor as Graphviz DOT: one box per recorded op
// (its name, output shape and dtype, and the tensors its backward saved), one
// ellipse per leaf (a parameter's name when the caller names it, else its
// shape), an edge from every input to the op that consumed it, and the bytes
// the whole graph holds for its backward pass in the graph's label. `attn
// graph` draws a model's graph with it; any program may call it.
#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>

#include "attn/engine/tensor.h"

namespace attn {

// Names for leaves, by identity (a Module's named_parameters(), mapped by
// nn/graph_names.h). Unnamed leaves are drawn as "input".
using TensorNames = std::unordered_map<const TensorImpl*, std::string>;

struct GraphSummary {
  int64_t ops = 0;           // recorded nodes
  int64_t leaves = 0;        // leaves that receive a gradient
  int64_t named_leaves = 0;  // of them, those `names` names
  int64_t edges = 0;         // input -> consumer arrows (a leaf used twice: two)
  // Distinct buffers the graph's backward closures keep alive, and their
  // bytes: a buffer saved by two ops, or saved twice by one, counts once.
  int64_t saved_buffers = 0;
  int64_t saved_bytes = 0;
  // Of saved_bytes, those of leaves' own buffers (parameters a backward
  // reads): memory that exists anyway, unlike saved activations.
  int64_t saved_leaf_bytes = 0;
};

struct GraphDot {
  std::string dot;
  GraphSummary summary;
};

// Walks the graph from `root` (iteratively: graphs of long sequences are
// deep). The text depends only on the graph, never on addresses, so the same
// graph gives the same DOT. A root without history is drawn as a lone leaf.
GraphDot graph_dot(const Tensor& root, const TensorNames& names = {});

}  // namespace attn
