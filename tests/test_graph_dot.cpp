// The autograd graph as DOT (engine/graph_dot.h, nn/graph_names.h) and the
// kernel trace (engine/kernel_trace.h): node and edge counts of small graphs
// worked out by hand, parameters drawn by name, saved bytes counted once per
// buffer, well-formed and deterministic DOT for a real encoder, and one trace
// line per kernel call with its shapes.
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <sstream>

#include "attn/engine/autograd.h"
#include "attn/engine/graph_dot.h"
#include "attn/engine/kernel_trace.h"
#include "attn/models/masks.h"
#include "attn/models/task_model.h"
#include "attn/nn/graph_names.h"
#include "attn/nn/linear.h"
#include "attn/ops/binary/binary.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/ops/softmax/softmax.h"
#include "attn/ops/unary/unary.h"

namespace attn {
namespace {

// Checks what Graphviz needs of our output: braces balanced outside quoted
// labels, and every edge's endpoints declared as nodes. Returns the declared
// node ids.
std::set<std::string> check_well_formed(const std::string& dot) {
  int depth = 0;
  bool quoted = false;
  for (size_t i = 0; i < dot.size(); ++i) {
    const char c = dot[i];
    if (quoted) {
      if (c == '\\') ++i;  // an escaped character, a quote included
      else if (c == '"') quoted = false;
      continue;
    }
    if (c == '"') quoted = true;
    if (c == '{') ++depth;
    if (c == '}') --depth;
    EXPECT_GE(depth, 0) << "a '}' closes nothing at offset " << i;
  }
  EXPECT_FALSE(quoted) << "a label is not closed";
  EXPECT_EQ(depth, 0);
  EXPECT_EQ(dot.rfind("digraph tape {", 0), 0u);

  std::set<std::string> declared;
  const std::regex node_line(R"(^  (\w+) \[shape=)"), edge_line(R"(^  (\w+) -> (\w+)[ ;])");
  std::istringstream lines(dot);
  std::string line;
  std::vector<std::pair<std::string, std::string>> edges;
  std::smatch m;
  while (std::getline(lines, line)) {
    if (std::regex_search(line, m, node_line)) {
      EXPECT_TRUE(declared.insert(m[1]).second) << "declared twice: " << m[1];
    }
    if (std::regex_search(line, m, edge_line)) edges.emplace_back(m[1], m[2]);
  }
  for (const auto& [from, to] : edges) {
    EXPECT_TRUE(declared.count(from)) << "edge from undeclared " << from;
    EXPECT_TRUE(declared.count(to)) << "edge to undeclared " << to;
  }
  return declared;
}

int64_t count_of(const std::string& text, const std::string& part) {
  int64_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

TEST(GraphDot, LinearReluSumHasItsOpsLeavesAndEdges) {
  Generator gen(3);
  Linear fc(4, 3, gen);
  const Tensor x = full({2, 4}, 0.5);  // an input that takes no gradient: no leaf, no edge
  const Tensor y = sum(relu(fc(x)));
  const GraphDot g = graph_dot(y, fc);
  // sum <- relu <- linear <- {weight, bias}: three ops, two named leaves and
  // one edge per gradient-taking input (linear's x takes none).
  EXPECT_EQ(g.summary.ops, 3);
  EXPECT_EQ(g.summary.leaves, 2);
  EXPECT_EQ(g.summary.named_leaves, 2);
  EXPECT_EQ(g.summary.edges, 4);
  EXPECT_NE(g.dot.find("op0: sum\\n[] float32"), std::string::npos) << g.dot;
  EXPECT_NE(g.dot.find("op1: relu\\n[2, 3] float32"), std::string::npos) << g.dot;
  EXPECT_NE(g.dot.find("op2: linear\\n[2, 3] float32"), std::string::npos) << g.dot;
  EXPECT_NE(g.dot.find(": weight\\n[3, 4] float32"), std::string::npos) << g.dot;
  EXPECT_NE(g.dot.find(": bias\\n[3] float32"), std::string::npos) << g.dot;
  EXPECT_EQ(count_of(g.dot, " -> "), g.summary.edges);
  EXPECT_EQ(check_well_formed(g.dot).size(), 5u);
  // Saved: linear's input x (2 x 4 float32) and weight (3 x 4), relu's
  // output (2 x 3); sum saves nothing. The weight is a leaf's own buffer.
  EXPECT_EQ(g.summary.saved_buffers, 3);
  EXPECT_EQ(g.summary.saved_bytes, (8 + 12 + 6) * 4);
  EXPECT_EQ(g.summary.saved_leaf_bytes, 12 * 4);
  EXPECT_NE(g.dot.find("saves nothing"), std::string::npos);
  EXPECT_NE(g.dot.find("[2, 3] float32, 24 B: its output"), std::string::npos) << g.dot;
}

TEST(GraphDot, ABufferSavedTwiceCountsOnce) {
  const Tensor x = full({3, 5}, 2.0, DType::F64).set_requires_grad();
  const Tensor y = mul(x, x);  // saves both operands: the same buffer
  const GraphDot g = graph_dot(y);
  EXPECT_EQ(g.summary.ops, 1);
  EXPECT_EQ(g.summary.leaves, 1);
  EXPECT_EQ(g.summary.named_leaves, 0);
  EXPECT_EQ(g.summary.edges, 2);  // x enters twice
  EXPECT_EQ(g.summary.saved_buffers, 1);
  EXPECT_EQ(g.summary.saved_bytes, 3 * 5 * 8);
  EXPECT_NE(g.dot.find("saves 120 B"), std::string::npos) << g.dot;
  EXPECT_NE(g.dot.find("leaf0: input\\n[3, 5] float64"), std::string::npos) << g.dot;
  check_well_formed(g.dot);
}

TEST(GraphDot, AFreedGraphSavesNothing) {
  const Tensor x = full({4}, 1.0).set_requires_grad();
  const Tensor y = sum(softmax(x, 0));
  EXPECT_EQ(graph_dot(y).summary.saved_bytes, 4 * 4);  // softmax's output
  y.backward();
  const GraphDot g = graph_dot(y);
  EXPECT_EQ(g.summary.saved_bytes, 0);
  EXPECT_EQ(g.summary.saved_buffers, 0);
  EXPECT_NE(g.dot.find("backward done: saved tensors freed"), std::string::npos) << g.dot;
}

TEST(GraphDot, ALeafWithoutHistoryIsALoneLeaf) {
  const Tensor x = full({2}, 1.0).set_requires_grad();
  const GraphDot g = graph_dot(x, TensorNames{{x.impl(), "w \"quoted\""}});
  EXPECT_EQ(g.summary.ops, 0);
  EXPECT_EQ(g.summary.leaves, 1);
  EXPECT_EQ(g.summary.named_leaves, 1);
  EXPECT_NE(g.dot.find("w \\\"quoted\\\""), std::string::npos) << g.dot;  // escaped for DOT
  check_well_formed(g.dot);
}

// A tiny MTSA task model's forward on a padded batch.
struct TinyModel {
  Generator init{1}, noise{2};
  Config config = Config::parse("encoder = mtsa\nembedding_dim = 8\nhead_hidden = 8\nhidden = 8\n");
  TaskModel model{config, TaskKind::Classify, 12, 3, DType::F32, init, noise};
  Tensor logits;
  TinyModel() {
    TaskInputs in;
    in.ids = from_indices({1, 2, 3, 4, 5, 6, 7, 0}, {2, 4});
    in.mask = length_mask({4, 3}, 4);
    logits = model.logits(in);
  }
};

TEST(GraphDot, ARealEncoderDrawsEveryParameterByNameAndIsDeterministic) {
  TinyModel a;
  const GraphDot g = graph_dot(a.logits, a.model);
  const std::set<std::string> ids = check_well_formed(g.dot);
  EXPECT_EQ(static_cast<int64_t>(ids.size()), g.summary.ops + g.summary.leaves);
  EXPECT_EQ(count_of(g.dot, " -> "), g.summary.edges);
  // Every parameter takes part in the forward, and every leaf is one.
  EXPECT_EQ(g.summary.leaves, static_cast<int64_t>(a.model.named_parameters().size()));
  EXPECT_EQ(g.summary.named_leaves, g.summary.leaves);
  for (const auto& [name, t] : a.model.named_parameters())
    EXPECT_NE(g.dot.find(": " + name + "\\n"), std::string::npos) << name;
  // A tree would have one edge fewer than nodes; attention reuses its inputs.
  EXPECT_GT(g.summary.edges, g.summary.ops + g.summary.leaves - 1);
  EXPECT_NE(g.dot.find(": softmax_pool\\n"), std::string::npos);
  EXPECT_NE(g.dot.find(": embedding\\n"), std::string::npos);
  EXPECT_GT(g.summary.saved_bytes, g.summary.saved_leaf_bytes);  // activations are saved too
  // The same graph built again (same seeds) gives the same text.
  TinyModel b;
  EXPECT_EQ(graph_dot(b.logits, b.model).dot, g.dot);
}

TEST(KernelTrace, OneLinePerKernelCallWithItsShapes) {
  std::ostringstream out;
  int64_t traced = 0;
  const Tensor a = full({2, 3}, 1.5).set_requires_grad(), b = full({2, 3}, -0.5).set_requires_grad();
  {
    KernelTrace trace(out);
    EXPECT_EQ(kernel_observer(), &trace);
    const Tensor y = sum(mul(a, b));
    y.backward();
    traced = trace.kernels_traced();
  }
  EXPECT_EQ(kernel_observer(), nullptr);  // the previous observer (none) is back
  const std::string text = out.str();
  EXPECT_EQ(count_of(text, "\n"), traced);
  EXPECT_GE(traced, 3);  // the product, the sum, and at least one kernel of the backward
  const std::regex line(R"(^ *\w+  cpu  .* [0-9]+\.[0-9] us(  \(backward of \w+\))?$)");
  std::istringstream lines(text);
  std::string l;
  while (std::getline(lines, l)) EXPECT_TRUE(std::regex_match(l, line)) << l;
  EXPECT_NE(text.find("binary  cpu  float32[2, 3] float32[2, 3] float32[2, 3]  "), std::string::npos) << text;
  EXPECT_NE(text.find("(backward of mul)"), std::string::npos) << text;
}

}  // namespace
}  // namespace attn
