// What a node declares its backward saved (engine/autograd.h: record's
// `saved` list) against what its closure really holds: for every sample of
// every op in the registry, destroying a node's closure must free exactly the
// declared buffers that nothing else holds, byte for byte (an undeclared
// capture frees more than declared). Then a few ops by hand: a product saves
// both operands, softmax its output, a view nothing.
#include <gtest/gtest.h>

#include <deque>
#include <set>
#include <unordered_set>

#include "attn/engine/allocator.h"
#include "attn/engine/autograd.h"
#include "attn/engine/copy.h"
#include "attn/ops/matmul/matmul.h"
#include "attn/ops/registry.h"
#include "attn/ops/softmax/softmax.h"
#include "attn/ops/view/view.h"

namespace attn {
namespace {

int64_t cpu_bytes_in_use() { return allocator_for(Device::CPU).stats().current_bytes; }

// Every node behind `root`, breadth first.
std::vector<std::shared_ptr<Node>> nodes_behind(const Tensor& root) {
  std::vector<std::shared_ptr<Node>> nodes{root.grad_fn()};
  std::unordered_set<Node*> seen{root.grad_fn().get()};
  for (size_t i = 0; i < nodes.size(); ++i)
    for (const Edge& e : nodes[i]->inputs)
      if (e.node && seen.insert(e.node.get()).second) nodes.push_back(e.node);
  return nodes;
}

TEST(SavedTensors, EveryRegistryOpFreesExactlyWhatItDeclaredWhenItsClosureGoes) {
  int64_t nodes_checked = 0, nodes_saving = 0;
  std::set<std::string> ops_seen;
  for (const OpSpec& spec : op_registry().all()) {
    for (const OpCase& c : spec.cases()) {
      std::vector<std::shared_ptr<Node>> nodes;
      {
        // Inputs that take a gradient are copied by a recorded clone, so the
        // test holds none of the buffers the op sees: an op that saves an
        // operand is then the only holder of it.
        std::vector<Tensor> inputs;
        for (const Tensor& t : c.inputs) inputs.push_back(t.defined() && t.requires_grad() ? clone(t) : t);
        Tensor out = c.fn(inputs);
        if (!out.grad_fn()) continue;
        nodes = nodes_behind(out);
      }
      for (const std::shared_ptr<Node>& node : nodes) {
        // The declared buffers (once each) and which of them are freed with
        // the closure (those nothing else holds: not a leaf, not another
        // node's closure, not the case's own constants).
        std::vector<std::weak_ptr<Storage>> declared;
        std::vector<int64_t> bytes;
        std::set<const Storage*> distinct;
        for (const SavedTensor& s : node->saved) {
          std::shared_ptr<Storage> storage = s.storage.lock();
          ASSERT_NE(storage, nullptr) << node->op << " (" << c.label << "): a declared tensor is already freed, "
                                      << "so the closure does not hold it";
          EXPECT_EQ(s.bytes, static_cast<int64_t>(storage->bytes())) << node->op;
          if (!distinct.insert(storage.get()).second) continue;
          declared.push_back(storage);
          bytes.push_back(s.bytes);
        }
        const int64_t before = cpu_bytes_in_use();
        node->backward = nullptr;
        const int64_t freed = before - cpu_bytes_in_use();
        int64_t expected = 0;
        for (size_t i = 0; i < declared.size(); ++i) expected += declared[i].expired() ? bytes[i] : 0;
        EXPECT_EQ(freed, expected) << spec.name << " (" << c.label << "), node '" << node->op << "' declares "
                                   << node->saved.size() << " saved tensors";
        ++nodes_checked;
        nodes_saving += node->saved.empty() ? 0 : 1;
        ops_seen.insert(node->op);
      }
    }
  }
  // The registry reaches most of the engine's ops, and most of them save something.
  EXPECT_GT(ops_seen.size(), 40u);
  EXPECT_GT(nodes_saving, nodes_checked / 4);
}

Tensor leaf(const Shape& shape, double start) {
  std::vector<double> v;
  for (int64_t i = 0; i < numel_of(shape); ++i) v.push_back(start + 0.25 * static_cast<double>(i));
  return from_vector(v, shape, DType::F64).set_requires_grad();
}

TEST(SavedTensors, MatmulSavesBothOperands) {
  Tensor a = leaf({2, 3}, 0.5), b = leaf({3, 4}, -1.0);
  Tensor y = matmul(a, b);
  const Node& node = *y.grad_fn();
  EXPECT_STREQ(node.op, "matmul");
  ASSERT_EQ(node.saved.size(), 2u);
  EXPECT_EQ(node.saved[0].shape, Shape({2, 3}));
  EXPECT_EQ(node.saved[0].bytes, 2 * 3 * 8);
  EXPECT_EQ(node.saved[0].storage.lock(), a.storage());
  EXPECT_EQ(node.saved[1].bytes, 3 * 4 * 8);
  EXPECT_EQ(node.saved[1].storage.lock(), b.storage());
  EXPECT_EQ(node.output_shape, Shape({2, 4}));
  EXPECT_EQ(node.output_dtype, DType::F64);
}

TEST(SavedTensors, SoftmaxSavesItsOutput) {
  Tensor x = leaf({2, 5}, -0.5);
  Tensor y = softmax(x, -1);
  const Node& node = *y.grad_fn();
  ASSERT_EQ(node.saved.size(), 1u);
  EXPECT_EQ(node.saved[0].storage.lock(), y.storage());
  EXPECT_EQ(node.output_storage.lock(), y.storage());
  EXPECT_EQ(node.saved[0].bytes, 2 * 5 * 8);
}

TEST(SavedTensors, ViewsSaveNothing) {
  Tensor x = leaf({2, 6}, 0.0);
  for (const Tensor& y : {reshape(x, {3, 4}), transpose(x, 0, 1), unsqueeze(x, 0), slice(x, 1, 1, 4, 1)}) {
    ASSERT_TRUE(y.grad_fn());
    EXPECT_TRUE(y.grad_fn()->saved.empty()) << y.grad_fn()->op;
  }
}

}  // namespace
}  // namespace attn
