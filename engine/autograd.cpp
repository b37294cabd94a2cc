#include "attn/engine/autograd.h"

#include <unordered_map>

#include "attn/engine/error.h"
#include "attn/engine/copy.h"

namespace attn {

namespace {
thread_local bool t_grad_enabled = true;
thread_local const char* t_backward_op = nullptr;

// Sets the op whose backward runs for its scope (nests, restores).
class BackwardOpScope {
 public:
  explicit BackwardOpScope(const char* op) : previous_(t_backward_op) { t_backward_op = op; }
  ~BackwardOpScope() { t_backward_op = previous_; }
  BackwardOpScope(const BackwardOpScope&) = delete;
  BackwardOpScope& operator=(const BackwardOpScope&) = delete;

 private:
  const char* previous_;
};
}  // namespace

const char* current_backward_op() { return t_backward_op; }

namespace {
// The running node's inputs' pending gradients (null where none or a leaf),
// and which of them pending_gradient has handed to its backward formula.
struct PendingSlots {
  std::vector<Tensor*> slots;
  std::vector<bool> offered;
};
thread_local PendingSlots* t_pending = nullptr;
thread_local const Tensor* t_output_gradient = nullptr;

class PendingScope {
 public:
  PendingScope(PendingSlots* slots, const Tensor* output_gradient)
      : previous_(t_pending), previous_output_(t_output_gradient) {
    t_pending = slots;
    t_output_gradient = output_gradient;
  }
  ~PendingScope() {
    t_pending = previous_;
    t_output_gradient = previous_output_;
  }
  PendingScope(const PendingScope&) = delete;
  PendingScope& operator=(const PendingScope&) = delete;

 private:
  PendingSlots* previous_;
  const Tensor* previous_output_;
};
}  // namespace

Tensor pending_gradient(size_t input) {
  if (t_pending == nullptr || input >= t_pending->slots.size() || t_pending->slots[input] == nullptr) return Tensor();
  const Tensor& t = *t_pending->slots[input];
  // The engine's slot must be the only holder of the tensor and its memory:
  // writing into a gradient shared with another input, or into a view's
  // base, would change that one too.
  if (!t.defined() || t.impl_ptr().use_count() != 1 || t.storage().use_count() != 1 || !t.is_contiguous())
    return Tensor();
  t_pending->offered[input] = true;
  return t;
}

Tensor writable_output_gradient() {
  if (t_output_gradient == nullptr) return Tensor();
  const Tensor& t = *t_output_gradient;
  // As for pending_gradient: the engine's local must be the only holder of
  // the tensor and its memory (a seed the caller keeps, or a view, is not).
  if (!t.defined() || t.impl_ptr().use_count() != 1 || t.storage().use_count() != 1 || !t.is_contiguous())
    return Tensor();
  return t;
}

bool grad_enabled() { return t_grad_enabled; }

NoGrad::NoGrad() : previous_(t_grad_enabled) { t_grad_enabled = false; }
NoGrad::~NoGrad() { t_grad_enabled = previous_; }

bool any_requires_grad(const std::vector<Tensor>& inputs) {
  if (!t_grad_enabled) return false;
  for (const Tensor& t : inputs)
    if (t.defined() && t.requires_grad()) return true;
  return false;
}

void record(Tensor& output, const char* op, const std::vector<Tensor>& inputs, const std::vector<Tensor>& saved,
            BackwardFn backward) {
  if (!any_requires_grad(inputs)) return;
  auto node = std::make_shared<Node>();
  node->op = op;
  node->backward = std::move(backward);
  node->saved.reserve(saved.size());
  for (const Tensor& t : saved) {
    if (!t.defined()) continue;
    node->saved.push_back({t.shape(), t.dtype(), static_cast<int64_t>(t.storage()->bytes()), t.storage()});
  }
  node->output_shape = output.shape();
  node->output_dtype = output.dtype();
  node->output_storage = output.storage();
  node->inputs.reserve(inputs.size());
  for (const Tensor& t : inputs) {
    Edge e;
    if (t.defined()) {
      e.shape = t.shape();
      if (t.requires_grad()) {
        if (t.grad_fn()) e.node = t.grad_fn();
        else e.leaf = t.impl_ptr();
      }
    }
    node->inputs.push_back(std::move(e));
  }
  output.impl()->grad_fn = std::move(node);
  output.impl()->requires_grad = true;
}

namespace {
GradientAdder gradient_adder = nullptr;
}  // namespace

void set_gradient_adder(GradientAdder add) { gradient_adder = add; }

namespace {

// Gradients are never modified in place, so one tensor may safely be handed
// to several inputs (add's backward does that); accumulation makes a new one.
Tensor accumulate(const Tensor& existing, const Tensor& incoming) {
  if (!existing.defined()) return incoming;
  ATTN_CHECK(gradient_adder != nullptr, "backward", "no gradient adder installed (ops/binary/binary.cpp is not linked)");
  return gradient_adder(existing, incoming);
}

bool has_hooks(const TensorImpl& leaf) { return leaf.grad_hooks && !leaf.grad_hooks->hooks.empty(); }

// This pass's gradient of a leaf after the leaf's hooks.
Tensor hooked_leaf_gradient(const TensorImpl& leaf, Tensor g) {
  if (!has_hooks(leaf)) return g;
  return run_gradient_hooks(*leaf.grad_hooks, std::move(g), "a leaf of shape " + shape_str(leaf.shape));
}

void accumulate_into_leaf(TensorImpl& leaf, const Tensor& g) {
  Tensor stored = accumulate(leaf.grad, g);
  leaf.grad = stored.is_contiguous() ? stored : contiguous(stored);
}

// Number of edges pointing at each node reachable from root (iterative DFS).
std::unordered_map<Node*, int> count_dependencies(Node* root) {
  std::unordered_map<Node*, int> deps;
  std::vector<Node*> stack{root};
  deps[root] = 0;
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    for (const Edge& e : n->inputs) {
      if (!e.node) continue;
      auto it = deps.find(e.node.get());
      if (it == deps.end()) {
        deps[e.node.get()] = 1;
        stack.push_back(e.node.get());
      } else {
        ++it->second;
      }
    }
  }
  return deps;
}

}  // namespace

void run_backward(const Tensor& root, const Tensor& grad_output, bool retain_graph) {
  ATTN_CHECK(root.requires_grad(), "backward", "tensor does not require grad (no input of its graph does)");
  Tensor seed = grad_output;
  if (!seed.defined()) {
    ATTN_CHECK(root.numel() == 1, "backward", "grad_output must be given for a non-scalar output of shape ",
               shape_str(root.shape()));
    seed = full(root.shape(), 1.0, root.dtype(), Device::CPU);
    if (root.device() != Device::CPU) seed = to_device(seed, root.device());
  }
  ATTN_CHECK(seed.shape() == root.shape(), "backward", "grad_output of shape ", shape_str(seed.shape()),
             " for output of shape ", shape_str(root.shape()));

  NoGrad no_grad;  // backward formulas are not themselves recorded
  if (!root.grad_fn()) {
    BackwardOpScope in_backward("(seed of backward)");
    accumulate_into_leaf(*root.impl(), hooked_leaf_gradient(*root.impl(), seed));
    return;
  }

  Node* start = root.grad_fn().get();
  std::unordered_map<Node*, int> deps = count_dependencies(start);
  std::unordered_map<Node*, Tensor> pending;
  pending[start] = seed;
  std::vector<std::shared_ptr<Node>> ready{root.grad_fn()};
  // Leaves with hooks collect this pass's contributions; their hooks see the
  // sum once the pass is over (a leaf's grad() is not read during backward).
  std::vector<std::pair<std::shared_ptr<TensorImpl>, Tensor>> hooked_leaves;
  std::unordered_map<TensorImpl*, size_t> hooked_leaf_slot;

  while (!ready.empty()) {
    std::shared_ptr<Node> node = ready.back();
    ready.pop_back();
    BackwardOpScope in_backward(node->op);
    Tensor grad = pending[node.get()];
    pending.erase(node.get());
    if (node->grad_hooks && !node->grad_hooks->hooks.empty() && grad.defined())
      grad = run_gradient_hooks(*node->grad_hooks, std::move(grad), std::string("the output of '") + node->op + "'");
    ATTN_CHECK(node->backward != nullptr, "backward",
               "the graph through '", node->op, "' was already freed; pass retain_graph=true to the first backward");

    std::vector<Tensor> input_grads;
    PendingSlots slots{std::vector<Tensor*>(node->inputs.size(), nullptr), std::vector<bool>(node->inputs.size())};
    if (grad.defined()) {
      std::vector<bool> needs(node->inputs.size());
      for (size_t i = 0; i < needs.size(); ++i) {
        const Edge& e = node->inputs[i];
        needs[i] = e.needs_grad();
        auto it = e.node ? pending.find(e.node.get()) : pending.end();
        if (it != pending.end()) slots.slots[i] = &it->second;
      }
      PendingScope offering(&slots, &grad);
      input_grads = node->backward(grad, needs);
      ATTN_CHECK(input_grads.size() == node->inputs.size(), "backward", "op '", node->op, "' returned ",
                 input_grads.size(), " gradients for ", node->inputs.size(), " inputs");
    }

    for (size_t i = 0; i < node->inputs.size(); ++i) {
      const Edge& e = node->inputs[i];
      const Tensor* g = i < input_grads.size() && input_grads[i].defined() ? &input_grads[i] : nullptr;
      if (g && e.needs_grad())
        ATTN_CHECK(g->shape() == e.shape, "backward", "op '", node->op, "' gave input ", i, " a gradient of shape ",
                   shape_str(g->shape()), " but the input has shape ", shape_str(e.shape));
      if (e.leaf && g) {
        if (has_hooks(*e.leaf)) {
          auto [slot, inserted] = hooked_leaf_slot.emplace(e.leaf.get(), hooked_leaves.size());
          if (inserted) hooked_leaves.emplace_back(e.leaf, Tensor());
          Tensor& sum = hooked_leaves[slot->second].second;
          sum = accumulate(sum, *g);
        } else {
          accumulate_into_leaf(*e.leaf, *g);
        }
      }
      if (e.node) {
        Tensor& sum = pending[e.node.get()];
        // A formula that added into the offered gradient returned it: already the sum.
        const bool added_in_place = slots.offered[i] && g && sum.impl() == g->impl();
        if (g && !added_in_place) sum = accumulate(sum, *g);
        if (--deps[e.node.get()] == 0) ready.push_back(e.node);
      }
    }
    if (!retain_graph) {
      node->backward = nullptr;  // frees what the op saved
      node->inputs.clear();      // and releases the graph above it
    }
  }
  BackwardOpScope in_leaf_hooks("(gradient hooks of leaves)");
  for (auto& [leaf, sum] : hooked_leaves) accumulate_into_leaf(*leaf, hooked_leaf_gradient(*leaf, std::move(sum)));
}

}  // namespace attn
