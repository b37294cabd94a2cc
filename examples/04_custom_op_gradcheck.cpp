// Checking the backward of an op of your own with the library's sampled
// gradient check (attn/ops/sampled_gradcheck.h), the runner behind
// `attn gradcheck --model`.
//  1. log_cosh: a forward loop and a backward formula recorded on the tape.
//  2. gradcheck(fn, inputs, options) compares the tape's gradient of
//     sum(fn(x) * R) (R fixed and random) with central differences at a
//     sample of elements of every input, in float64.
//  3. The same op with a backward wrong by a factor of 2 must fail, and the
//     report names the input and the element.
// Exits non-zero when the check fails on the right op or passes the wrong one.
#include <attn/engine/autograd.h>
#include <attn/engine/random.h>
#include <attn/engine/tensor.h>
#include <attn/ops/binary/binary.h>
#include <attn/ops/matmul/matmul.h>
#include <attn/ops/sampled_gradcheck.h>
#include <attn/ops/unary/unary.h>

#include <cmath>
#include <cstdio>
#include <vector>

using namespace attn;

// log(cosh(x)), computed as |x| + log1p(exp(-2|x|)) - log 2 so a large |x|
// does not overflow cosh; d/dx = tanh(x). `backward_scale` is 1 for the
// right op; the wrong one scales its gradient.
Tensor log_cosh(const Tensor& x, double backward_scale = 1.0) {
  Tensor y = empty(x.shape(), x.dtype());
  for (int64_t i = 0; i < x.numel(); ++i) {
    const double a = std::fabs(read_element(x, i));
    write_element(y, i, a + std::log1p(std::exp(-2 * a)) - std::log(2.0));
  }
  Tensor xs = x.detach();  // what the backward keeps: the input, without its history
  record(y, "log_cosh", {x}, {xs}, [xs, backward_scale](const Tensor& grad, const std::vector<bool>&) {
    return std::vector<Tensor>{grad * tanh(xs) * backward_scale};
  });
  return y;
}

// The op inside a small layer: log_cosh(x W) for x [8, 6], W [6, 5].
SampledGradcheckResult check(double backward_scale) {
  Generator gen(4);
  std::vector<Tensor> inputs = {rand_uniform({8, 6}, -2, 2, gen, DType::F64).set_requires_grad(),
                                rand_uniform({6, 5}, -1, 1, gen, DType::F64).set_requires_grad()};
  SampledGradcheckOptions options;  // step 1e-6, atol 1e-5, rtol 1e-3
  options.samples = 10;             // of the 48 and 30 elements
  return gradcheck(
      [backward_scale](const std::vector<Tensor>& in) { return log_cosh(matmul(in[0], in[1]), backward_scale); },
      inputs, options, {"x", "W"});
}

void print(const char* what, const SampledGradcheckResult& r) {
  std::printf("%s: %lld elements, max abs error %.2e, %s\n", what, static_cast<long long>(r.checked), r.max_abs_error,
              r.passed ? "passed" : "FAILED");
  for (const GradcheckInputReport& in : r.inputs)
    std::printf("  %-2s %3lld checked, max abs error %.2e, worst: %s\n", in.label.c_str(),
                static_cast<long long>(in.checked), in.max_abs_error, describe_element(in, in.worst).c_str());
  if (!r.passed) std::printf("  failure: %s\n", r.failure.c_str());
}

int main() {
  SampledGradcheckResult right = check(1.0);
  print("log_cosh", right);
  SampledGradcheckResult wrong = check(2.0);
  print("log_cosh with its backward doubled", wrong);
  const bool ok = right.passed && !wrong.passed;
  std::printf("%s\n", ok ? "04_custom_op_gradcheck: the right backward passes, the wrong one is caught"
                         : "04_custom_op_gradcheck: FAILED");
  return ok ? 0 : 1;
}
