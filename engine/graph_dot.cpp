#include "attn/engine/graph_dot.h"

#include <cstdio>
#include <deque>
#include <sstream>
#include <unordered_set>
#include <vector>

#include "attn/engine/autograd.h"
#include "attn/engine/error.h"

namespace attn {

namespace {

// Inside a DOT string: quotes and backslashes escaped (names are the
// caller's; an op name or a shape never needs it, but a name might).
std::string escaped(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

// "96 B", or "4096 B (4.0 KiB)": exact, and readable when large.
std::string bytes_text(int64_t bytes) {
  std::string text = std::to_string(bytes) + " B";
  if (bytes < 1024) return text;
  const char* unit = bytes < (int64_t{1} << 20) ? "KiB" : "MiB";
  const double scaled = static_cast<double>(bytes) / (bytes < (int64_t{1} << 20) ? 1024.0 : 1024.0 * 1024.0);
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, " (%.1f %s)", scaled, unit);
  return text + buffer;
}

std::string shape_and_dtype(const Shape& shape, DType dtype) { return shape_str(shape) + " " + dtype_name(dtype); }

// A DOT label of several lines, each escaped.
std::string label_of(const std::vector<std::string>& lines) {
  std::string label;
  for (const std::string& line : lines) label += (label.empty() ? "" : "\\n") + escaped(line);
  return label;
}

// The graph in breadth-first order from the root: ops and leaves numbered as
// first reached, so the numbering depends on the graph only.
struct Walk {
  std::vector<const Node*> ops;
  std::vector<const TensorImpl*> leaves;
  std::unordered_map<const Node*, size_t> op_index;
  std::unordered_map<const TensorImpl*, size_t> leaf_index;

  void add_leaf(const TensorImpl* leaf) {
    if (leaf_index.emplace(leaf, leaves.size()).second) leaves.push_back(leaf);
  }

  explicit Walk(const Tensor& root) {
    if (!root.grad_fn()) {
      if (root.defined() && root.requires_grad()) add_leaf(root.impl());
      return;
    }
    std::deque<const Node*> queue{root.grad_fn().get()};
    op_index[root.grad_fn().get()] = 0;
    ops.push_back(root.grad_fn().get());
    while (!queue.empty()) {
      const Node* node = queue.front();
      queue.pop_front();
      for (const Edge& e : node->inputs) {
        if (e.leaf) add_leaf(e.leaf.get());
        if (e.node && op_index.emplace(e.node.get(), ops.size()).second) {
          ops.push_back(e.node.get());
          queue.push_back(e.node.get());
        }
      }
    }
  }
};

std::string op_id(size_t i) { return "op" + std::to_string(i); }
std::string leaf_id(size_t i) { return "leaf" + std::to_string(i); }

}  // namespace

GraphDot graph_dot(const Tensor& root, const TensorNames& names) {
  ATTN_CHECK(root.defined(), "graph_dot", "the tensor is undefined");
  const Walk walk(root);
  GraphDot result;
  GraphSummary& s = result.summary;
  s.ops = static_cast<int64_t>(walk.ops.size());
  s.leaves = static_cast<int64_t>(walk.leaves.size());

  // Which buffer is whose: a saved tensor is named after the first op (in
  // walk order) whose output lives in the same storage, or the leaf's.
  std::unordered_map<const Storage*, size_t> output_of, leaf_of;
  for (size_t i = 0; i < walk.ops.size(); ++i)
    if (auto storage = walk.ops[i]->output_storage.lock()) output_of.emplace(storage.get(), i);
  for (size_t i = 0; i < walk.leaves.size(); ++i) leaf_of.emplace(walk.leaves[i]->storage.get(), i);

  std::ostringstream body;
  std::unordered_set<const Storage*> counted;
  for (size_t i = 0; i < walk.ops.size(); ++i) {
    const Node& node = *walk.ops[i];
    std::vector<std::string> label{op_id(i) + ": " + node.op, shape_and_dtype(node.output_shape, node.output_dtype)};
    if (!node.backward) {
      label.push_back("backward done: saved tensors freed");
    } else {
      std::unordered_set<const Storage*> mine;
      int64_t node_bytes = 0;
      std::vector<std::string> lines;
      for (const SavedTensor& saved : node.saved) {
        std::shared_ptr<Storage> storage = saved.storage.lock();  // alive: the closure holds it
        if (!storage) continue;
        if (mine.insert(storage.get()).second) node_bytes += saved.bytes;
        const auto leaf = leaf_of.find(storage.get());
        if (counted.insert(storage.get()).second) {
          ++s.saved_buffers;
          s.saved_bytes += saved.bytes;
          if (leaf != leaf_of.end()) s.saved_leaf_bytes += saved.bytes;
        }
        std::string whose = "not an output or leaf";
        if (storage == node.output_storage.lock()) {
          whose = "its output";
        } else if (auto it = output_of.find(storage.get()); it != output_of.end()) {
          whose = "output of " + op_id(it->second);
        } else if (leaf != leaf_of.end()) {
          auto name = names.find(walk.leaves[leaf->second]);
          whose = leaf_id(leaf->second) + (name != names.end() ? " " + name->second : std::string());
        }
        lines.push_back(shape_and_dtype(saved.shape, saved.dtype) + ", " + bytes_text(saved.bytes) + ": " + whose);
      }
      label.push_back(lines.empty() ? "saves nothing" : "saves " + bytes_text(node_bytes));
      label.insert(label.end(), lines.begin(), lines.end());
    }
    body << "  " << op_id(i) << " [shape=box, label=\"" << label_of(label) << "\"];\n";
  }
  for (size_t i = 0; i < walk.leaves.size(); ++i) {
    const TensorImpl* leaf = walk.leaves[i];
    auto name = names.find(leaf);
    if (name != names.end()) ++s.named_leaves;
    const std::string title = name != names.end() ? name->second : "input";
    body << "  " << leaf_id(i) << " [shape=ellipse, " << (name != names.end() ? "style=filled, fillcolor=\"#e8f0fe\", " : "")
         << "label=\"" << label_of({leaf_id(i) + ": " + title, shape_and_dtype(leaf->shape, leaf->dtype)}) << "\"];\n";
  }
  for (size_t i = 0; i < walk.ops.size(); ++i) {
    const Node& node = *walk.ops[i];
    size_t drawn = 0;
    for (const Edge& e : node.inputs) drawn += e.needs_grad() ? 1 : 0;
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      const Edge& e = node.inputs[k];
      if (!e.needs_grad()) continue;
      const std::string from = e.node ? op_id(walk.op_index.at(e.node.get())) : leaf_id(walk.leaf_index.at(e.leaf.get()));
      body << "  " << from << " -> " << op_id(i);
      // Which input it is, where the op has several that take a gradient.
      if (drawn > 1) body << " [label=\"" << k << "\"]";
      body << ";\n";
      ++s.edges;
    }
  }

  std::ostringstream dot;
  dot << "digraph tape {\n"
      << "  graph [labelloc=t, fontname=\"Helvetica\", label=\"" << s.ops << " ops, " << s.leaves << " leaves ("
      << s.named_leaves << " named), " << s.edges << " edges; saved for backward: " << bytes_text(s.saved_bytes)
      << " in " << s.saved_buffers << " buffers (" << bytes_text(s.saved_leaf_bytes)
      << " of them leaves' own)\"];\n"
      << "  node [fontname=\"Helvetica\", fontsize=10];\n"
      << "  edge [fontname=\"Helvetica\", fontsize=8];\n"
      << body.str() << "}\n";
  result.dot = dot.str();
  return result;
}

}  // namespace attn
