// Tensors, the tape and a gradient check, top to bottom.
//  1. A tensor is storage + shape + strides: a transpose is a view, no copy.
//  2. backward() fills .grad() of every leaf that asked for one.
//  3. A new op with its own forward loop and backward formula, recorded on the tape.
//  4. gradcheck_case compares the tape's Jacobian of any composite function
//     with central differences, in float64.
#include <attn/engine/autograd.h>
#include <attn/engine/random.h>
#include <attn/engine/tensor.h>
#include <attn/ops/binary/binary.h>
#include <attn/ops/gradcheck.h>
#include <attn/ops/matmul/matmul.h>
#include <attn/ops/reduce/reduce.h>
#include <attn/ops/softmax/softmax.h>
#include <attn/ops/unary/unary.h>
#include <attn/ops/view/view.h>

#include <cmath>
#include <cstdio>
#include <vector>

using namespace attn;

static int failures = 0;
static void expect(bool ok, const char* what) {
  std::printf("%s  %s\n", ok ? "ok  " : "FAIL", what);
  failures += ok ? 0 : 1;
}

// softsign(x) = x / (1 + |x|), d/dx = 1 / (1 + |x|)^2: a new op. The forward
// is a plain loop (a CPU "kernel"); record() puts a node on the tape whose
// backward turns the output's gradient into the input's, here with engine ops.
Tensor softsign(const Tensor& x) {
  Tensor y = empty(x.shape(), x.dtype());
  for (int64_t i = 0; i < x.numel(); ++i) {
    double v = read_element(x, i);  // follows x's strides: views work too
    write_element(y, i, v / (1 + std::fabs(v)));
  }
  // Capture inputs detached: capturing y itself would be a reference cycle.
  // The saved list names what the closure holds, so the node can tell its size.
  const Tensor xs = x.detach();
  record(y, "softsign", {x}, {xs}, [xs](const Tensor& grad, const std::vector<bool>&) {
    return std::vector<Tensor>{grad / pow_scalar(1.0 + abs(xs), 2.0)};
  });
  return y;
}

// A user-defined composite: one query attends over keys and pools the values,
// then softsign squashes the result. q [d], keys [n, d], values [n, d] -> [d].
Tensor attention_pool(const Tensor& q, const Tensor& keys, const Tensor& values) {
  Tensor scores = matmul(keys, q) / std::sqrt(static_cast<double>(q.size(0)));  // [n]
  Tensor weights = softmax(scores, -1);                                          // [n], sums to 1
  return softsign(matmul(weights, values));                                      // [d]
}

int main() {
  // 1. Views share storage; only shape, strides and offset change.
  Tensor a = from_vector({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor at = transpose(a, 0, 1);  // [3, 2]
  expect(at.storage() == a.storage() && at.strides() == std::vector<int64_t>{1, 3}, "transpose is a view");
  expect(at.at({2, 1}) == 6 && !at.is_contiguous(), "element (2, 1) of the transpose is a[1][2] = 6");

  // 2. y = sum(x^2 + 3x): dy/dx = 2x + 3, exactly representable here.
  Tensor x = from_vector({-1, 0, 2}, {3}).set_requires_grad();
  Tensor y = sum(x * x + 3.0 * x);
  y.backward();
  expect(y.item() == 8 && x.grad().to_vector() == std::vector<double>{1, 3, 7}, "backward of sum(x^2 + 3x)");

  // 3 and 4. Gradient checks in float64 (inputs that require grad are checked).
  Generator gen(7);
  Tolerance tolerance;  // step 1e-6, atol 1e-5, rtol 1e-3
  OpCase own_op{"softsign", {rand_uniform({4, 3}, -2, 2, gen, DType::F64).set_requires_grad()},
                [](const std::vector<Tensor>& in) { return softsign(in[0]); }};
  OpCase composite{"attention_pool",
                   {rand_uniform({5}, -1, 1, gen, DType::F64).set_requires_grad(),
                    rand_uniform({6, 5}, -1, 1, gen, DType::F64).set_requires_grad(),
                    rand_uniform({6, 5}, -1, 1, gen, DType::F64).set_requires_grad()},
                   [](const std::vector<Tensor>& in) { return attention_pool(in[0], in[1], in[2]); }};
  for (const OpCase* c : {&own_op, &composite}) {
    CaseResult r = gradcheck_case(*c, tolerance);
    std::printf("gradcheck %-15s max abs error %.2e  max rel error %.2e  %s\n", r.label.c_str(), r.max_abs_error,
                r.max_rel_error, r.passed ? "passed" : r.failure.c_str());
    expect(r.passed, "gradcheck agrees with central differences");
  }
  std::printf("%s\n", failures == 0 ? "01_autograd: all checks passed" : "01_autograd: FAILED");
  return failures == 0 ? 0 : 1;
}
