// Which kernel serves each plain product of ops/matmul/matmul.h. The rules:
// - a relu is taken as the GEMM stores its sums where the call is one
//   product whose stores can take it: linear_relu (one input) and
//   matmul_bias's relu (with a bias). Its backward selects the gradient and
//   sums the bias's columns in one pass.
// - a bias of a product rides on the GEMM's stores (matmul_bias); a linear
//   layer's bias always does (the linear kernel).
// - a concatenated input is one GEMM per part into the same output, the
//   later ones accumulating (linear_sum, matmul_sum): no concatenation
//   forward, no split of its gradient backward.
// - any other activation, and a relu after an accumulated sum (the later
//   GEMMs cannot take it in their stores), is the unary op after the product.
#include "attn/engine/error.h"
#include "attn/ops/matmul/matmul.h"
#include "attn/ops/matmul/matmul_fused.h"
#include "attn/ops/view/view.h"

namespace attn {

namespace {

// The parts' sizes along their last axis, checked to add up to `total` (the
// axis of the operand they are split from).
std::vector<int64_t> part_sizes(const char* op, const Concat& x, int64_t total, const Tensor& split) {
  ATTN_CHECK(!x.parts.empty(), op, "needs at least one part in the concatenation");
  std::vector<int64_t> sizes;
  int64_t sum = 0;
  for (const Tensor& p : x.parts) {
    ATTN_CHECK(p.defined() && p.dim() >= 1, op, "got an undefined or 0-d part");
    sizes.push_back(p.shape().back());
    sum += sizes.back();
  }
  ATTN_CHECK(sum == total, op, "the parts' last axes add up to ", sum, ", the operand ", shape_str(split.shape()),
             " has ", total, " to split among them");
  return sizes;
}

// t cut along `axis` into consecutive views of the given sizes.
std::vector<Tensor> split_views(const Tensor& t, int64_t axis, const std::vector<int64_t>& sizes) {
  std::vector<Tensor> views;
  int64_t start = 0;
  for (int64_t s : sizes) {
    views.push_back(narrow(t, axis, start, s));
    start += s;
  }
  return views;
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b, const Tensor& bias, Activation act) {
  if (!bias.defined()) return activate(act, matmul(a, b));
  if (act == Activation::Relu) return matmul_bias(a, b, bias, /*relu=*/true);
  return activate(act, matmul_bias(a, b, bias));
}

Tensor matmul(const Concat& a, const Tensor& b, const Tensor& bias, Activation act) {
  ATTN_CHECK(b.defined() && b.dim() >= 2, "matmul", "a concatenated left operand needs a right one of rank >= 2, got ",
             b.defined() ? shape_str(b.shape()) : std::string("an undefined one"));
  if (a.parts.size() == 1) return matmul(a.parts[0], b, bias, act);
  const int64_t rows = b.dim() - 2;
  const std::vector<Tensor> bs = split_views(b, rows, part_sizes("matmul", a, b.shape()[rows], b));
  return activate(act, matmul_sum(a.parts, bs, bias));
}

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias, Activation act) {
  if (act == Activation::Relu) return linear_relu(x, weight, bias);
  return activate(act, linear_unactivated(x, weight, bias));
}

Tensor linear(const Concat& x, const Tensor& weight, const Tensor& bias, Activation act) {
  ATTN_CHECK(weight.defined() && weight.dim() == 2, "linear", "weight must be [out, in], got ",
             weight.defined() ? shape_str(weight.shape()) : std::string("an undefined one"));
  if (x.parts.size() == 1) return linear(x.parts[0], weight, bias, act);
  return linear(x, Concat(split_views(weight, 1, part_sizes("linear", x, weight.shape()[1], weight))), bias, act);
}

Tensor linear(const Concat& x, const Concat& weight, const Tensor& bias, Activation act) {
  ATTN_CHECK(!x.parts.empty() && x.parts.size() == weight.parts.size(), "linear",
             "needs one weight block per input part and at least one part, got ", x.parts.size(), " part(s) and ",
             weight.parts.size(), " weight block(s)");
  if (x.parts.size() == 1) return linear(x.parts[0], weight.parts[0], bias, act);
  return activate(act, linear_sum(x.parts, weight.parts, bias));
}

}  // namespace attn
