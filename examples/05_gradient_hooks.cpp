// Gradient hooks: look at a gradient as it flows, or change it.
//  1. A hook on a non-leaf tensor (the logits) sees the gradient reaching it:
//     for a mean cross-entropy that is (softmax - one-hot) / batch, whose rows
//     sum to zero.
//  2. A hook on one layer's weight clips that layer's gradient to a norm of
//     at most 0.1, leaving every other parameter's gradient as it was.
#include <attn/engine/autograd.h>
#include <attn/engine/random.h>
#include <attn/nn/linear.h>
#include <attn/ops/binary/binary.h>
#include <attn/ops/loss/loss.h>
#include <attn/ops/reduce/reduce.h>

#include <cmath>
#include <cstdio>

using namespace attn;

static double norm(const Tensor& t) { return std::sqrt(sum(t * t).item()); }

int main() {
  Generator gen(3);
  Linear hidden(8, 16, gen, true, DType::F64), out(16, 3, gen, true, DType::F64);
  Tensor x = rand_uniform({4, 8}, -2, 2, gen, DType::F64);
  Tensor labels = from_indices({0, 2, 1, 2}, {4});

  // The same forward twice: without hooks, then with them.
  auto loss_of = [&]() { return cross_entropy(out.forward(hidden.forward(x, Activation::Relu)), labels); };
  loss_of().backward();
  const double plain_hidden = norm(hidden.weight.grad()), plain_out = norm(out.weight.grad());
  hidden.weight.zero_grad(), hidden.bias.zero_grad(), out.weight.zero_grad(), out.bias.zero_grad();

  const double max_norm = 0.1;
  HookHandle clip = hidden.weight.register_hook([max_norm](const Tensor& g) {
    const double n = norm(g);
    std::printf("hidden.weight gradient norm %.4f%s\n", n, n > max_norm ? ", clipped to 0.1" : "");
    return n > max_norm ? g * (max_norm / n) : Tensor();  // undefined: keep it as it is
  });
  double worst_row_sum = 0;
  Tensor logits = out.forward(hidden.forward(x, Activation::Relu));
  logits.register_hook([&](const Tensor& g) {
    std::printf("logits gradient [%lld, %lld], norm %.4f\n", static_cast<long long>(g.size(0)),
                static_cast<long long>(g.size(1)), norm(g));
    for (double s : sum(g, {1}).to_vector()) worst_row_sum = std::fmax(worst_row_sum, std::fabs(s));
    return Tensor();
  });
  cross_entropy(logits, labels).backward();
  clip.remove();

  const double clipped = norm(hidden.weight.grad()), out_norm = norm(out.weight.grad());
  std::printf("hidden.weight: %.4f without the hook, %.4f with it; out.weight: %.4f and %.4f\n", plain_hidden,
              clipped, plain_out, out_norm);
  int failures = 0;
  failures += worst_row_sum < 1e-15 ? 0 : 1;                        // rows of softmax - one-hot sum to 0
  failures += plain_hidden > max_norm && std::fabs(clipped - max_norm) < 1e-12 ? 0 : 1;
  failures += std::fabs(out_norm - plain_out) <= 1e-12 * plain_out ? 0 : 1;  // other layers untouched
  std::printf("%s\n", failures == 0 ? "ok" : "FAILED");
  return failures == 0 ? 0 : 1;
}
