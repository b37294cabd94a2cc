// The plain products of ops/matmul/matmul.h and the kernel each call form is
// served by (ops/matmul/matmul_fusion.cpp): the op recorded on the tape, the
// kernels the forward runs, and the same bits as the fused entry point
// (ops/matmul/matmul_fused.h) the call is meant to reach, which is that one
// path run again. Against the unfused composition (a different kernel) only
// within rounding.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "attn/engine/autograd.h"
#include "attn/engine/kernel_table.h"
#include "attn/engine/random.h"
#include "attn/ops/join/join.h"
#include "attn/ops/matmul/matmul.h"
#include "attn/ops/matmul/matmul_fused.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/ops/view/view.h"
#include "test_util.h"

namespace attn {
namespace {

using namespace testing_support;

// The kernels a call runs at the top level (a kernel's nested calls, such as
// a bias copied in before a GEMM, are its own business).
class TopLevelKernels : public KernelObserver {
 public:
  TopLevelKernels() : previous_(set_kernel_observer(this)) {}
  ~TopLevelKernels() override { set_kernel_observer(previous_); }
  void before(const char* op, Device) override {
    if (depth_++ == 0) names.push_back(op);
  }
  void after(const char*, Device) override { --depth_; }
  std::vector<std::string> names;

 private:
  KernelObserver* previous_;
  int depth_ = 0;
};

using Names = std::vector<std::string>;

Tensor leaf(const Tensor& t) { return t.detach().set_requires_grad(true); }

// The op that recorded t, and the one that recorded its first input.
std::string op_of(const Tensor& t) { return t.grad_fn() ? t.grad_fn()->op : "(leaf)"; }
std::string input_op_of(const Tensor& t) {
  return t.grad_fn() && t.grad_fn()->inputs[0].node ? t.grad_fn()->inputs[0].node->op : "(none)";
}

void expect_same_bits(const Tensor& a, const Tensor& b, const char* what) {
  EXPECT_EQ(a.shape(), b.shape()) << what;
  EXPECT_EQ(a.to_vector(), b.to_vector()) << what;
}

// Inputs of a linear layer [2, 3, 5] -> [2, 3, 4], signed so that a relu cuts.
struct LinearCase {
  Tensor x, w, b;
  LinearCase() {
    Generator gen(7);
    x = leaf(rand_uniform({2, 3, 5}, -1, 1, gen, DType::F32));
    w = leaf(rand_uniform({4, 5}, -1, 1, gen, DType::F32));
    b = leaf(rand_uniform({4}, -1, 1, gen, DType::F32));
  }
};

TEST(FusionDispatch, LinearTakesAReluInItsStoresAndOtherActivationsAfter) {
  const LinearCase c;
  {
    TopLevelKernels k;
    const Tensor y = linear(c.x, c.w, c.b);
    EXPECT_EQ(k.names, Names({"linear"}));
    EXPECT_EQ(op_of(y), "linear");
    expect_same_bits(y, linear_unactivated(c.x, c.w, c.b), "no activation");
  }
  {
    TopLevelKernels k;
    const Tensor y = linear(c.x, c.w, c.b, Activation::Relu);
    EXPECT_EQ(k.names, Names({"linear"}));  // the relu is no kernel of its own
    EXPECT_EQ(op_of(y), "linear_relu");
    expect_same_bits(y, linear_relu(c.x, c.w, c.b), "relu");
  }
  for (Activation a : {Activation::Elu, Activation::Tanh, Activation::Sigmoid}) {
    TopLevelKernels k;
    const Tensor y = linear(c.x, c.w, c.b, a);
    EXPECT_EQ(k.names, Names({"linear", "unary"}));
    EXPECT_EQ(input_op_of(y), "linear");
    expect_same_bits(y, activate(a, linear_unactivated(c.x, c.w, c.b)), "after the product");
  }
  // Without a bias the same kernels serve.
  TopLevelKernels k;
  EXPECT_EQ(op_of(linear(c.x, c.w, Tensor(), Activation::Relu)), "linear_relu");
  EXPECT_EQ(k.names, Names({"linear"}));
}

// MTSA's per-head layer: [2, 3, 4, 5] @ [3, 5, 2] with a bias [3, 1, 2].
struct HeadCase {
  Tensor a, b, bias;
  HeadCase() {
    Generator gen(8);
    a = leaf(rand_uniform({2, 3, 4, 5}, -1, 1, gen, DType::F32));
    b = leaf(rand_uniform({3, 5, 2}, -1, 1, gen, DType::F32));
    bias = leaf(rand_uniform({3, 1, 2}, -1, 1, gen, DType::F32));
  }
};

TEST(FusionDispatch, AProductTakesItsBiasAndAReluInItsStores) {
  const HeadCase c;
  struct Form {
    bool bias;
    Activation act;
    Names kernels;
    std::string op, input_op;
  };
  const std::vector<Form> forms = {
      {false, Activation::None, {"matmul"}, "matmul", "(none)"},
      {false, Activation::Relu, {"matmul", "unary"}, "relu", "matmul"},
      {true, Activation::None, {"matmul_bias"}, "matmul_bias", "(none)"},
      {true, Activation::Relu, {"matmul_bias"}, "matmul_bias_relu", "(none)"},
      {true, Activation::Tanh, {"matmul_bias", "unary"}, "tanh", "matmul_bias"},
  };
  for (const Form& f : forms) {
    TopLevelKernels k;
    const Tensor y = matmul(c.a, c.b, f.bias ? c.bias : Tensor(), f.act);
    EXPECT_EQ(k.names, f.kernels) << f.op;
    EXPECT_EQ(op_of(y), f.op);
    EXPECT_EQ(input_op_of(y), f.input_op) << f.op;
  }
  expect_same_bits(matmul(c.a, c.b, c.bias), matmul_bias(c.a, c.b, c.bias), "bias");
  expect_same_bits(matmul(c.a, c.b, c.bias, Activation::Relu), matmul_bias(c.a, c.b, c.bias, true), "bias, relu");
  expect_same_bits(matmul(c.a, c.b, Tensor()), matmul(c.a, c.b), "no bias");
}

// x1 [2, 3, 5] and x2 [2, 3, 3] against one weight [4, 8].
struct ConcatCase {
  Tensor x1, x2, w, b;
  ConcatCase() {
    Generator gen(9);
    x1 = leaf(rand_uniform({2, 3, 5}, -1, 1, gen, DType::F32));
    x2 = leaf(rand_uniform({2, 3, 3}, -1, 1, gen, DType::F32));
    w = leaf(rand_uniform({4, 8}, -1, 1, gen, DType::F32));
    b = leaf(rand_uniform({4}, -1, 1, gen, DType::F32));
  }
  std::vector<Tensor> blocks() const { return {narrow(w, 1, 0, 5), narrow(w, 1, 5, 3)}; }
};

TEST(FusionDispatch, ALayerOverAConcatenationIsOneAccumulatingGemmPerPart) {
  const ConcatCase c;
  {
    TopLevelKernels k;
    const Tensor y = linear(Concat({c.x1, c.x2}), c.w, c.b);
    EXPECT_EQ(k.names, Names({"linear", "linear"}));  // no concatenation, no add
    EXPECT_EQ(op_of(y), "linear_sum");
    expect_same_bits(y, linear_sum({c.x1, c.x2}, c.blocks(), c.b), "whole weight");
    expect_same_bits(linear(Concat({c.x1, c.x2}), Concat(c.blocks()), c.b), y, "weight blocks");
  }
  {
    // The later GEMMs accumulate, so a relu is a pass after the sum.
    TopLevelKernels k;
    const Tensor y = linear(Concat({c.x1, c.x2}), c.w, c.b, Activation::Relu);
    EXPECT_EQ(k.names, Names({"linear", "linear", "unary"}));
    EXPECT_EQ(op_of(y), "relu");
    EXPECT_EQ(input_op_of(y), "linear_sum");
  }
  // One part is the plain layer, relu fused.
  const Tensor w1 = narrow(c.w, 1, 0, 5);
  const Tensor one = linear(Concat({c.x1}), w1, c.b, Activation::Relu);
  EXPECT_EQ(op_of(one), "linear_relu");
  expect_same_bits(one, linear_relu(c.x1, w1, c.b), "one part");
}

// The split layer and the layer over the built concatenation are different
// kernels: each output and each x gradient is a sum of at most 9 products of
// operands in [-1, 1) (8 inputs and the bias; 4 outputs), each within k u of
// the exact sum of k terms of size <= 1, so the two differ by at most 2 k^2 u.
TEST(FusionDispatch, ALayerOverAConcatenationIsTheLayerOverTheBuiltOneWithinRounding) {
  const ConcatCase c;
  const double u = std::ldexp(1.0, -24), bound = 2 * 9 * 9 * u;
  const Tensor x1 = leaf(c.x1), x2 = leaf(c.x2), x1c = leaf(c.x1), x2c = leaf(c.x2);
  const Tensor split = linear(Concat({x1, x2}), c.w, c.b);
  const Tensor built = linear(concat({x1c, x2c}, -1), c.w, c.b);
  EXPECT_LE(max_abs_diff(split, built), bound);
  sum(split).backward();
  sum(built).backward();
  EXPECT_LE(max_abs_diff(x1.grad(), x1c.grad()), bound);
  EXPECT_LE(max_abs_diff(x2.grad(), x2c.grad()), bound);
}

TEST(FusionDispatch, AProductOverAConcatenationSplitsTheRightOperandsRows) {
  // MTSA's gate: [v | h] @ W per head, W [3, 9, 2] split 5 + 4 rows.
  Generator gen(10);
  const Tensor v = leaf(rand_uniform({2, 3, 4, 5}, -1, 1, gen, DType::F32));
  const Tensor h = leaf(rand_uniform({2, 3, 4, 4}, -1, 1, gen, DType::F32));
  const Tensor w = leaf(rand_uniform({3, 9, 2}, -1, 1, gen, DType::F32));
  const Tensor bias = leaf(rand_uniform({3, 1, 2}, -1, 1, gen, DType::F32));
  const std::vector<Tensor> rows = {narrow(w, 1, 0, 5), narrow(w, 1, 5, 4)};
  {
    TopLevelKernels k;
    const Tensor y = matmul(Concat({v, h}), w, bias);
    EXPECT_EQ(k.names, Names({"matmul_bias", "matmul"}));  // the first term onto the bias, the second adds
    EXPECT_EQ(op_of(y), "matmul_sum");
    expect_same_bits(y, matmul_sum({v, h}, rows, bias), "bias");
  }
  {
    TopLevelKernels k;
    const Tensor y = matmul(Concat({v, h}), w);
    EXPECT_EQ(k.names, Names({"matmul", "matmul"}));
    expect_same_bits(y, matmul_sum({v, h}, rows), "no bias");
  }
  TopLevelKernels k;
  const Tensor y = matmul(Concat({v, h}), w, bias, Activation::Relu);
  EXPECT_EQ(k.names, Names({"matmul_bias", "matmul", "unary"}));
  EXPECT_EQ(input_op_of(y), "matmul_sum");
}

TEST(FusionDispatch, AConcatenationThatDoesNotFitTheOperandIsAnError) {
  const ConcatCase c;
  EXPECT_NE(error_of([&] { linear(Concat({c.x1}), c.w, c.b); }).find("input size"), std::string::npos)
      << "one part: the plain layer's own check";
  EXPECT_NE(error_of([&] { linear(Concat({c.x1, c.x1}), c.w, c.b); }).find("add up to 10"), std::string::npos);
  EXPECT_NE(error_of([&] { linear(Concat(std::vector<Tensor>{}), c.w, c.b); }).find("at least one part"),
            std::string::npos);
  EXPECT_NE(error_of([&] { linear(Concat({c.x1, c.x2}), Concat({c.w}), c.b); }).find("one weight block per"),
            std::string::npos);
  EXPECT_NE(error_of([&] { matmul(Concat({c.x1, c.x2}), c.b); }).find("rank >= 2"), std::string::npos);
}

}  // namespace
}  // namespace attn
