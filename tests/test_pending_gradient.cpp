// pending_gradient (engine/autograd.h): a backward formula may add its
// contribution into a gradient already pending for its input, in place. The
// engine offers it only when nothing else holds it, keeps it as the sum when
// the formula returns it, and adds anything else as before. linear's input
// gradient and matmul's first operand's use it (a GEMM with beta = 1), so an
// input feeding two layers gets its gradient without an add kernel.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "attn/engine/allocator.h"
#include "attn/engine/autograd.h"
#include "attn/engine/copy.h"
#include "attn/engine/kernel_table.h"
#include "attn/engine/random.h"
#include "attn/ops/binary/binary.h"
#include "attn/ops/matmul/matmul.h"
#include "attn/ops/matmul/matmul_fused.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/ops/unary/unary.h"
#include "attn/ops/view/view.h"

namespace attn {
namespace {

// What the probes' backward formulas saw.
struct ProbeLog {
  int offered = 0, not_offered = 0;
  std::vector<Tensor> kept;  // gradients a probe still holds after returning them
};

// y = x (a copy). Backward: asks for x's pending gradient; with `add_in_place`
// adds g into an offered one and returns it, else returns a fresh copy of g.
// The log also holds the returned gradient (Keep::tensor) or a view of it
// (Keep::view).
enum class Keep { nothing, tensor, view };
Tensor probe(const Tensor& x, ProbeLog& log, bool add_in_place, Keep keep) {
  Tensor y = empty(x.shape(), x.dtype());
  copy_into(y, x);
  record(y, "probe", {x}, {}, [&log, add_in_place, keep](const Tensor& g, const std::vector<bool>&) {
    Tensor pending = pending_gradient(0);
    (pending.defined() ? log.offered : log.not_offered) += 1;
    Tensor out;
    const Tensor gc = contiguous(g);
    if (pending.defined() && add_in_place) {
      double* p = pending.data<double>();
      const double* q = gc.data<double>();
      for (int64_t i = 0; i < pending.numel(); ++i) p[i] += q[i];
      out = pending;
    } else {
      out = empty(g.shape(), g.dtype());
      copy_into(out, g);
    }
    if (keep == Keep::tensor) log.kept.push_back(out);
    if (keep == Keep::view) log.kept.push_back(reshape(out, {out.numel(), 1}));
    return std::vector<Tensor>{out};
  });
  return y;
}

Tensor leaf_of(const std::vector<double>& values) {
  Tensor t = from_vector(values, {static_cast<int64_t>(values.size())}, DType::F64);
  t.set_requires_grad(true);
  return t;
}

Tensor constant(const std::vector<double>& values) {
  return from_vector(values, {static_cast<int64_t>(values.size())}, DType::F64);
}

// loss = sum(probe(x) * c1) + sum(probe(x) * c2) with x = 2 a: the probe
// that runs second finds the first one's gradient pending.
TEST(PendingGradient, TheSecondConsumerIsOfferedTheFirstOnesGradientAndMayAddIntoIt) {
  Tensor a = leaf_of({1, 2, 3});
  Tensor x = mul_scalar(a, 2.0);
  ProbeLog log;
  Tensor loss = add(sum(mul(probe(x, log, true, Keep::nothing), constant({1, 10, 100}))),
                    sum(mul(probe(x, log, true, Keep::nothing), constant({3, 30, 300}))));
  loss.backward();
  EXPECT_EQ(log.offered, 1);
  EXPECT_EQ(log.not_offered, 1);
  EXPECT_EQ(a.grad().to_vector(), (std::vector<double>{8, 80, 800}));  // 2 (c1 + c2)
}

TEST(PendingGradient, AFormulaThatReturnsAnotherTensorIsAddedAsBefore) {
  Tensor a = leaf_of({1, 2, 3});
  Tensor x = mul_scalar(a, 2.0);
  ProbeLog log;
  Tensor loss = add(sum(mul(probe(x, log, false, Keep::nothing), constant({1, 10, 100}))),
                    sum(mul(probe(x, log, false, Keep::nothing), constant({3, 30, 300}))));
  loss.backward();
  EXPECT_EQ(log.offered, 1);  // offered, not used
  EXPECT_EQ(a.grad().to_vector(), (std::vector<double>{8, 80, 800}));
}

// A pending gradient something else still holds (here the first probe's own
// copy) is not offered: writing into it would change that holder's values.
TEST(PendingGradient, AGradientHeldElsewhereIsNotOfferedNorChanged) {
  Tensor a = leaf_of({1, 2, 3});
  Tensor x = mul_scalar(a, 2.0);
  ProbeLog log;
  Tensor loss = add(sum(mul(probe(x, log, true, Keep::tensor), constant({1, 10, 100}))),
                    sum(mul(probe(x, log, true, Keep::tensor), constant({1, 10, 100}))));
  loss.backward();
  EXPECT_EQ(log.offered, 0);
  EXPECT_EQ(log.not_offered, 2);
  ASSERT_EQ(log.kept.size(), 2u);
  EXPECT_EQ(log.kept[0].to_vector(), (std::vector<double>{1, 10, 100}));
  EXPECT_EQ(a.grad().to_vector(), (std::vector<double>{4, 40, 400}));
}

// The same with only a view of it held elsewhere: the tensor is the engine's
// alone, its memory is not.
TEST(PendingGradient, AGradientWhoseMemoryAViewStillSeesIsNotOfferedNorChanged) {
  Tensor a = leaf_of({1, 2, 3});
  Tensor x = mul_scalar(a, 2.0);
  ProbeLog log;
  Tensor loss = add(sum(mul(probe(x, log, true, Keep::view), constant({1, 10, 100}))),
                    sum(mul(probe(x, log, true, Keep::view), constant({1, 10, 100}))));
  loss.backward();
  EXPECT_EQ(log.offered, 0);
  ASSERT_EQ(log.kept.size(), 2u);
  EXPECT_EQ(log.kept[0].to_vector(), (std::vector<double>{1, 10, 100}));
  EXPECT_EQ(a.grad().to_vector(), (std::vector<double>{4, 40, 400}));
}

// add's backward hands one gradient to both operands, and each reshape hands
// on a view of it: x's and u's pending gradients share memory until one of
// them is used. Whatever the order, the probe's in-place add must not reach
// u's gradient.
TEST(PendingGradient, AGradientSharingMemoryWithAnotherIsNotWrittenThrough) {
  Tensor a = leaf_of({1, 2, 3, 4});
  Tensor b = leaf_of({5, 6, 7, 8});
  Tensor x = mul_scalar(a, 2.0), u = mul_scalar(b, 3.0);
  ProbeLog log;
  Tensor both = add(reshape(x, {2, 2}), reshape(u, {2, 2}));
  Tensor loss = add(sum(mul(both, reshape(constant({1, 10, 100, 1000}), {2, 2}))),
                    sum(mul(probe(x, log, true, Keep::nothing), constant({3, 30, 300, 3000}))));
  loss.backward();
  EXPECT_EQ(log.offered + log.not_offered, 1);
  EXPECT_EQ(a.grad().to_vector(), (std::vector<double>{8, 80, 800, 8000}));  // 2 (c + c_probe)
  EXPECT_EQ(b.grad().to_vector(), (std::vector<double>{3, 30, 300, 3000}));  // 3 c, untouched by the probe
}

TEST(PendingGradient, NothingIsOfferedOutsideABackwardPass) { EXPECT_FALSE(pending_gradient(0).defined()); }

// Counts kernel calls by op name.
class CallCounter : public KernelObserver {
 public:
  void before(const char* op, Device) override {
    if (std::strcmp(op, "binary") == 0) ++binary;
    if (std::strcmp(op, "linear") == 0) ++linear;
    if (std::strcmp(op, "matmul") == 0) ++matmul;
  }
  void after(const char*, Device) override {}
  int binary = 0, linear = 0, matmul = 0;
};

void expect_near_all(const Tensor& got, const Tensor& want) {
  ASSERT_EQ(got.shape(), want.shape());
  const std::vector<double> g = got.to_vector(), w = want.to_vector();
  // Each entry sums a few products of values in [-1, 1]: float64 rounding
  // stays far below 1e-12.
  for (size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], w[i], 1e-12) << "entry " << i;
}

// x feeds two linear layers: x's gradient is g1 W1 + g2 W2, the second
// product added into the first by its GEMM (a linear kernel with beta = 1),
// with no add kernel.
TEST(PendingGradient, LinearLayersSharingAnInputAddTheirInputGradientsInTheGemm) {
  Generator gen(3);
  const int64_t rows = 7, in = 5, out = 4;
  Tensor leaf = rand_uniform({rows, in}, -1, 1, gen, DType::F64);
  leaf.set_requires_grad(true);
  const Tensor w1 = rand_uniform({out, in}, -1, 1, gen, DType::F64);
  const Tensor w2 = rand_uniform({out, in}, -1, 1, gen, DType::F64);
  const Tensor b1 = rand_uniform({out}, -1, 1, gen, DType::F64);
  const Tensor c1 = rand_uniform({rows, out}, -1, 1, gen, DType::F64);
  const Tensor c2 = rand_uniform({rows, out}, -1, 1, gen, DType::F64);
  Tensor x = reshape(leaf, {rows, in});  // a node of its own, so x's gradient is pending between the layers
  Tensor y1 = linear(x, w1, b1), y2 = linear(x, w2);
  Tensor loss = add(sum(mul(y1, c1)), sum(mul(y2, c2)));

  CallCounter calls;
  KernelObserver* previous = set_kernel_observer(&calls);
  loss.backward();
  set_kernel_observer(previous);
  EXPECT_EQ(calls.binary, 2);  // the two mul backwards (g * c); no add of x's two gradients
  EXPECT_EQ(calls.linear, 1);  // the second input gradient, accumulated

  expect_near_all(leaf.grad(), add(matmul(c1, w1), matmul(c2, w2)));
}

// The same for matmul's first operand (MTSA's v into its per-head layers),
// batched: the second g b^T is added into the first by its GEMM. Where a is
// broadcast over b's batch, its gradient is summed over that axis: no
// product lands on the pending gradient as is, and the add stays.
TEST(PendingGradient, MatmulsSharingAFirstOperandAddTheirGradientsInTheGemm) {
  Generator gen(4);
  Tensor leaf = rand_uniform({2, 3, 4}, -1, 1, gen, DType::F64);
  leaf.set_requires_grad(true);
  const Tensor b1 = rand_uniform({4, 5}, -1, 1, gen, DType::F64);
  const Tensor b2 = rand_uniform({2, 4, 5}, -1, 1, gen, DType::F64);
  const Tensor c1 = rand_uniform({2, 3, 5}, -1, 1, gen, DType::F64);
  const Tensor c2 = rand_uniform({2, 3, 5}, -1, 1, gen, DType::F64);
  Tensor x = reshape(leaf, {2, 3, 4});
  Tensor loss = add(sum(mul(matmul(x, b1), c1)), sum(mul(matmul(x, b2), c2)));
  CallCounter calls;
  KernelObserver* previous = set_kernel_observer(&calls);
  loss.backward();
  set_kernel_observer(previous);
  EXPECT_EQ(calls.binary, 2);  // the two mul backwards only
  EXPECT_EQ(calls.matmul, 2);  // the two input gradients, the second accumulated
  expect_near_all(leaf.grad(), add(matmul(c1, transpose(b1, 0, 1)), matmul(c2, transpose(b2, 1, 2))));

  Tensor shared = rand_uniform({3, 4}, -1, 1, gen, DType::F64);
  shared.set_requires_grad(true);
  Tensor s = reshape(shared, {3, 4});
  Tensor loss2 = add(sum(mul(matmul(s, b2), c2)), sum(mul(matmul(s, b1), sum(c1, {0}))));
  loss2.backward();
  const Tensor summed = sum(matmul(c2, transpose(b2, 1, 2)), {0});
  expect_near_all(shared.grad(), add(summed, matmul(sum(c1, {0}), transpose(b1, 0, 1))));
}

// writable_output_gradient: a formula may overwrite its output's gradient
// when only the engine holds it; not when the caller holds it (a seed), not
// once a view of it exists, and never outside a backward pass.
Tensor output_gradient_probe(const Tensor& x, std::vector<bool>& offered, bool view_first) {
  Tensor y = empty(x.shape(), x.dtype());
  copy_into(y, x);
  record(y, "output_gradient_probe", {x}, {}, [&offered, view_first](const Tensor& g, const std::vector<bool>&) {
    const Tensor view = view_first ? reshape(g, {g.numel(), 1}) : Tensor();
    const Tensor writable = writable_output_gradient();
    offered.push_back(writable.defined());
    if (writable.defined()) {
      EXPECT_EQ(writable.data<double>(), g.data<double>());
    }
    return std::vector<Tensor>{mul_scalar(g, 1.0)};
  });
  return y;
}

TEST(WritableOutputGradient, OfferedOnlyWhenTheEngineAloneHoldsIt) {
  std::vector<bool> offered;
  Tensor a = leaf_of({1, 2, 3});
  // The engine's own gradient (of mul's output): offered.
  sum(mul(output_gradient_probe(a, offered, false), constant({1, 2, 3}))).backward();
  // Once the formula has taken a view of it: not offered.
  sum(mul(output_gradient_probe(a, offered, true), constant({1, 2, 3}))).backward();
  // The caller's own seed: not offered (writing it would change the caller's tensor).
  Tensor seed = constant({1, 1, 1});
  output_gradient_probe(a, offered, false).backward(seed);
  EXPECT_EQ(offered, (std::vector<bool>{true, false, false}));
  EXPECT_EQ(seed.to_vector(), (std::vector<double>{1, 1, 1}));
  EXPECT_FALSE(writable_output_gradient().defined());
}

// linear_relu selects its gradient in the memory of the gradient it is
// handed, where relu and linear as two ops hold g and relu's gradient at
// once: with a narrow input (the GEMMs' outputs small) the fused backward's
// peak is lower by most of one output-sized buffer. Without the in-place
// select the two peaks would be level.
TEST(WritableOutputGradient, LinearReluBackwardNeedsNoSecondOutputSizedBuffer) {
  Generator gen(31);
  const int64_t rows = 512, in = 8, out = 512;
  const Tensor x = rand_uniform({rows, in}, -1.0, 1.0, gen, DType::F32).set_requires_grad(true);
  const Tensor w = rand_uniform({out, in}, -1.0, 1.0, gen, DType::F32).set_requires_grad(true);
  const Tensor b = rand_uniform({out}, -1.0, 1.0, gen, DType::F32).set_requires_grad(true);
  const Tensor c = rand_uniform({rows, out}, -1.0, 1.0, gen, DType::F32);
  auto backward_peak = [&](bool fused) {
    Tensor y = fused ? linear_relu(x, w, b) : relu(linear(x, w, b));
    Tensor loss = sum(mul(y, c));
    y = Tensor();
    Allocator& alloc = allocator_for(Device::CPU);
    alloc.reset_peak();
    const int64_t before = alloc.stats().current_bytes;
    loss.backward();
    return alloc.stats().peak_bytes - before;
  };
  const int64_t separate = backward_peak(false), fused = backward_peak(true);
  const int64_t output_bytes = rows * out * static_cast<int64_t>(sizeof(float));
  EXPECT_GE(separate - fused, output_bytes * 3 / 4) << "separate " << separate << ", fused " << fused;
}

}  // namespace
}  // namespace attn
