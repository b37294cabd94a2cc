// The fused dot-product attention (ops/dot_product_attention/dot_product_attention.h) against its
// composed form (matmul, masked softmax, matmul): same outputs, probabilities
// and gradients for split_heads views with padded keys and an example with no
// valid key, in both dtypes; heads come back in [B, n, h, d] memory order so
// merge_heads is a view; padded key rows holding NaN reach nothing; clear
// errors for bad operands.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "attn/engine/copy.h"
#include "attn/models/masks.h"
#include "attn/models/multi_head.h"
#include "attn/ops/binary/binary.h"
#include "attn/ops/dot_product_attention/dot_product_attention.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/ops/view/view.h"
#include "model_checks.h"
#include "test_util.h"

namespace attn {
namespace {

using namespace testing_support;

struct AttentionRun {
  Tensor out, probabilities;
  std::vector<Tensor> grads;  // of the [B, n, h d] projections q, k, v
};

// Heads of three [B, n, h d] leaves, attention, and the gradients of
// sum(out * weights) into the leaves.
AttentionRun run(bool fused, const std::vector<Tensor>& leaves, const Tensor& valid, int64_t heads,
                 const Tensor& weights) {
  for (const Tensor& t : leaves) t.zero_grad();
  const Tensor q = split_heads(leaves[0], heads), k = split_heads(leaves[1], heads), v = split_heads(leaves[2], heads);
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(3)));
  DotProductAttention a =
      fused ? dot_product_attention(q, k, v, valid, scale) : dot_product_attention_composed(q, k, v, valid, scale);
  sum(a.out * weights).backward();
  AttentionRun r{a.out.detach(), a.probabilities, {}};
  for (const Tensor& t : leaves) r.grads.push_back(t.grad());
  return r;
}

std::vector<Tensor> projections(DType dt, int64_t B, int64_t n, int64_t features, uint64_t seed) {
  std::vector<Tensor> leaves;
  for (uint64_t i = 0; i < 3; ++i)
    leaves.push_back(cast(random_input({B, n, features}, seed + i), dt).detach().set_requires_grad(true));
  return leaves;
}

// Both dtypes, keys padded (lengths n, 3) and one example without a valid
// key, more keys than a panel block and features that are not a multiple
// of the panel width; at n = 37 the kernels pad the head's panels, at n =
// 64 they read the queries and the probabilities in place. float64 agrees
// to rounding; float32 to a bound of a few roundings per key at the
// outputs' scale (at least 1).
TEST(DotProductAttention, FusedMatchesTheComposedForm) {
  for (int64_t n : {37, 64}) {
  SCOPED_TRACE("n = " + std::to_string(n));
  const int64_t B = 3, heads = 2, d = 13;
  const Tensor valid = length_mask({n, 3, 0}, n);
  for (DType dt : {DType::F64, DType::F32}) {
    const std::vector<Tensor> leaves = projections(dt, B, n, heads * d, 1);
    const Tensor weights = cast(random_input({B, heads, n, d}, 9), dt).detach();
    const AttentionRun fused = run(true, leaves, valid, heads, weights),
                       composed = run(false, leaves, valid, heads, weights);
    const double eps = dt == DType::F64 ? std::ldexp(1.0, -52) : std::ldexp(1.0, -23);
    auto bound = [&](const Tensor& t) { return 8 * n * eps * std::max(1.0, max_abs(t)); };
    EXPECT_LT(max_abs_diff(fused.out, composed.out), bound(composed.out)) << dtype_name(dt);
    EXPECT_LT(max_abs_diff(fused.probabilities, composed.probabilities), bound(composed.probabilities))
        << dtype_name(dt);
    EXPECT_GT(max_abs(fused.out), 0.1) << dtype_name(dt);
    for (size_t i = 0; i < 3; ++i) {
      EXPECT_LT(max_abs_diff(fused.grads[i], composed.grads[i]), bound(composed.grads[i]))
          << dtype_name(dt) << " operand " << i;
      EXPECT_GT(max_abs(fused.grads[i]), 1e-3) << dtype_name(dt) << " operand " << i;
    }
    // The example without a valid key: zero output, zero probabilities.
    EXPECT_EQ(max_abs(narrow(fused.out, 0, 2, 1)), 0.0) << dtype_name(dt);
    EXPECT_EQ(max_abs(narrow(fused.probabilities, 0, 2, 1)), 0.0) << dtype_name(dt);
  }
  }
}

// The heads come back stored as [B, n, h, d], so merging them is a view of
// the same memory, and so are the gradients of split_heads views.
TEST(DotProductAttention, HeadsComeBackInTokenMajorOrder) {
  const std::vector<Tensor> leaves = projections(DType::F32, 2, 5, 6, 11);
  const Tensor q = split_heads(leaves[0], 3), k = split_heads(leaves[1], 3), v = split_heads(leaves[2], 3);
  const Tensor out = dot_product_attention(q, k, v, length_mask({5, 4}, 5), 0.5).out;
  EXPECT_EQ(out.strides(), std::vector<int64_t>({30, 2, 6, 1}));
  const Tensor merged = merge_heads(out);
  EXPECT_EQ(merged.data<float>(), out.data<float>());
  sum(merged).backward();
  for (const Tensor& leaf : leaves) EXPECT_EQ(leaf.grad().shape(), Shape({2, 5, 6}));
}

// Padded keys hold NaN in k and v: no output, probability or gradient sees
// it, and the padded keys' own gradients are exactly 0.
TEST(DotProductAttention, NanInPaddedKeysReachesNothing) {
  const int64_t B = 2, n = 6, heads = 2, d = 3;
  const Tensor valid = length_mask({6, 4}, n);
  for (DType dt : {DType::F32, DType::F64}) {
    std::vector<double> kv(static_cast<size_t>(B * n * heads * d));
    for (size_t i = 0; i < kv.size(); ++i) kv[i] = std::sin(0.7 * static_cast<double>(i));
    for (int64_t t = 4; t < n; ++t)
      for (int64_t f = 0; f < heads * d; ++f) kv[static_cast<size_t>((n + t) * heads * d + f)] = std::nan("");
    Tensor q = cast(random_input({B, n, heads * d}, 21), dt).detach().set_requires_grad(true);
    Tensor k = from_vector(kv, {B, n, heads * d}, dt).set_requires_grad(true);
    Tensor v = from_vector(kv, {B, n, heads * d}, dt).set_requires_grad(true);
    DotProductAttention a =
        dot_product_attention(split_heads(q, heads), split_heads(k, heads), split_heads(v, heads), valid, 0.5);
    sum(a.out).backward();
    for (const Tensor* t : {&a.out, &a.probabilities})
      for (double x : t->to_vector()) ASSERT_TRUE(std::isfinite(x)) << dtype_name(dt);
    for (const Tensor* t : {&q, &k, &v})
      for (double x : t->grad().to_vector()) ASSERT_TRUE(std::isfinite(x)) << dtype_name(dt);
    EXPECT_EQ(max_abs(narrow(narrow(k.grad(), 0, 1, 1), 1, 4, 2)), 0.0) << dtype_name(dt);
    EXPECT_EQ(max_abs(narrow(narrow(v.grad(), 0, 1, 1), 1, 4, 2)), 0.0) << dtype_name(dt);
    EXPECT_GT(max_abs(k.grad()), 1e-3) << dtype_name(dt);
  }
}

TEST(DotProductAttention, BadOperandsNameTheProblem) {
  const Tensor q = random_input({2, 3, 4, 5}, 31), k = random_input({2, 3, 6, 5}, 32),
               v = random_input({2, 3, 6, 5}, 33);
  const Tensor valid = ones({2, 6}, DType::U8);
  auto fails_with = [](const std::function<void()>& f, const std::string& text) {
    const std::string e = error_of(f);
    EXPECT_NE(e.find(text), std::string::npos) << "error was: " << e;
  };
  fails_with(
      [&] {
        dot_product_attention(q, k, random_input({2, 3, 6, 4}, 34), valid, 1.0);
      },
      "v of shape [2, 3, 6, 4] must have k's shape [2, 3, 6, 5]");
  fails_with(
      [&] {
        dot_product_attention(q, random_input({2, 2, 6, 5}, 35), random_input({2, 2, 6, 5}, 36), valid, 1.0);
      },
      "does not fit q of shape [2, 3, 4, 5]");
  fails_with(
      [&] {
        dot_product_attention(q, k, v, ones({2, 4}, DType::U8), 1.0);
      },
      "key_valid must be uint8 [B, nk] = [2, 6]");
  fails_with([&] { dot_product_attention(q, k, v, ones({2, 6}, DType::F32), 1.0); }, "key_valid must be uint8");
  fails_with([&] { dot_product_attention(q, cast(k, DType::F32), v, valid, 1.0); }, "k is float32 but q is float64");
  fails_with([&] { dot_product_attention(q, k, v, valid, std::nan("")); }, "scale must be finite");
  fails_with([&] { dot_product_attention(random_input({2, 4, 5}, 37), k, v, valid, 1.0); }, "q must be [B, h, n, d]");
}

}  // namespace
}  // namespace attn
