// The reverse-mode tape. Every differentiable op that sees an input needing a
// gradient records a Node: edges to its inputs, a backward closure that owns
// what it saved, the input shapes (to check what the backward returns), and a
// description of the tensors the closure saved and of the output, so that a
// graph can be drawn and its saved memory counted (engine/graph_dot.h).
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "attn/engine/gradient_hooks.h"
#include "attn/engine/tensor.h"

namespace attn {

// Where a gradient goes: the producing node of a non-leaf input, or the leaf
// itself. Neither when that input needs no gradient.
struct Edge {
  std::shared_ptr<Node> node;
  std::shared_ptr<TensorImpl> leaf;
  Shape shape;
  bool needs_grad() const { return node != nullptr || leaf != nullptr; }
};

// grads_for_inputs = backward(grad_of_output, which inputs need a gradient).
// An entry may be left undefined when its input needs none.
using BackwardFn = std::function<std::vector<Tensor>(const Tensor& grad, const std::vector<bool>& needs)>;

// One tensor a backward closure holds. `bytes` is the size of its whole
// storage, since that is what it keeps alive (a saved view keeps its base);
// `storage` identifies that buffer, so that a total over a graph counts a
// buffer saved twice, or saved and also some node's output, once.
struct SavedTensor {
  Shape shape;
  DType dtype = DType::F32;
  int64_t bytes = 0;
  std::weak_ptr<Storage> storage;
};

struct Node {
  const char* op = "";
  std::vector<Edge> inputs;
  BackwardFn backward;  // emptied when the graph is freed
  std::shared_ptr<GradientHookList> grad_hooks;  // hooks on the output (engine/gradient_hooks.h)
  // What `backward` captured, as the op declared it to record().
  std::vector<SavedTensor> saved;
  Shape output_shape;
  DType output_dtype = DType::F32;
  std::weak_ptr<Storage> output_storage;
};

// Gradient recording is on by default, per thread.
bool grad_enabled();

// Turns recording off for its scope (optimizer steps, evaluation, numerical
// differentiation). Nests.
class NoGrad {
 public:
  NoGrad();
  ~NoGrad();
  NoGrad(const NoGrad&) = delete;
  NoGrad& operator=(const NoGrad&) = delete;

 private:
  bool previous_;
};

// True when recording is on and some input needs a gradient.
bool any_requires_grad(const std::vector<Tensor>& inputs);

// Attaches a node to `output` when any of `inputs` needs a gradient. Backward
// closures must capture saved tensors with detach() (never `output` itself:
// that would be a reference cycle). `saved` lists every tensor the closure
// captures (undefined entries are skipped), so that the node can say what
// memory its backward keeps alive; tests/test_saved_tensors.cpp checks, for
// every op of the registry, that destroying the closure frees exactly that.
void record(Tensor& output, const char* op, const std::vector<Tensor>& inputs, const std::vector<Tensor>& saved,
            BackwardFn backward);

// The forward op whose backward is running on this thread (the Node's op),
// or null outside a backward pass: anomaly detection names it.
const char* current_backward_op();

// The gradient already pending for input `input` of the node whose backward
// is running on this thread, offered so that the formula can add its own
// contribution into it in place (a GEMM with beta = 1 instead of a product
// and then an add pass). Offered only when nothing but the engine holds it
// (not a gradient handed to two inputs, not a view of another) and it is
// contiguous; undefined otherwise, and outside a backward pass. A formula
// that adds into it returns that same tensor as the input's gradient, and the
// engine keeps it as the sum; any other tensor it returns is added as usual.
Tensor pending_gradient(size_t input);

// The gradient of the running node's output, offered for the formula to
// overwrite in place: only when nothing but the engine holds it (not the
// caller's seed, not a view of another tensor, no view of it taken yet) and
// it is contiguous; undefined otherwise, and outside a backward pass. The
// engine frees it when the formula returns, so a formula that transforms it
// elementwise first (relu's select in linear_relu) needs no second buffer of
// that size while it runs.
Tensor writable_output_gradient();

// Accumulating two gradients of one tensor is an elementwise add, an op of the
// layer above (ops/binary/binary.cpp installs it when it is linked), so that the
// engine includes nothing above itself.
using GradientAdder = Tensor (*)(const Tensor& a, const Tensor& b);
void set_gradient_adder(GradientAdder add);

// The engine behind Tensor::backward.
void run_backward(const Tensor& root, const Tensor& grad_output, bool retain_graph);

}  // namespace attn
