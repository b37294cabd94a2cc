// The matmul family against a naive triple loop: plain, transposed-view,
// batched and broadcast-batch operands, vectors, the fused linear layer,
// error messages, hand-expanded broadcast gradients, and the benchmark command.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>

#include "test_util.h"
#include "attn/engine/autograd.h"
#include "attn/engine/error.h"
#include "attn/engine/random.h"
#include "attn/ops/binary/binary.h"
#include "attn/engine/copy.h"
#include "attn/ops/matmul/matmul.h"
#include "attn/ops/view/view.h"
#include "attn/train/bench/bench_matmul.h"
#include "attn/util/cli_args.h"

namespace attn {
namespace {

using namespace testing_support;

using ::testing::HasSubstr;

// Row-major index of `index` in `shape`, where axes of size 1 broadcast.
int64_t broadcast_flat(const Shape& shape, const Shape& index) {
  int64_t flat = 0;
  const size_t lead = index.size() - shape.size();
  for (size_t d = 0; d < shape.size(); ++d) flat = flat * shape[d] + (shape[d] == 1 ? 0 : index[lead + d]);
  return flat;
}

// a [..., m, k] @ b [..., k, n] by definition, reading values in logical order.
std::vector<double> naive_matmul(const Tensor& a, const Tensor& b, Shape* out_shape) {
  const std::vector<double> av = a.to_vector(), bv = b.to_vector();
  const int64_t m = a.size(-2), k = a.size(-1), n = b.size(-1);
  Shape ba(a.shape().begin(), a.shape().end() - 2), bb(b.shape().begin(), b.shape().end() - 2);
  const size_t rank = std::max(ba.size(), bb.size());
  Shape batch(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i + ba.size() >= rank ? ba[i + ba.size() - rank] : 1;
    int64_t db = i + bb.size() >= rank ? bb[i + bb.size() - rank] : 1;
    batch[i] = std::max(da, db);
  }
  *out_shape = batch;
  out_shape->push_back(m);
  out_shape->push_back(n);
  const int64_t count = numel_of(batch);
  std::vector<double> out;
  Shape index(rank, 0);
  for (int64_t e = 0; e < count; ++e) {
    int64_t rest = e;
    for (size_t d = rank; d-- > 0;) {
      index[d] = rest % batch[d];
      rest /= batch[d];
    }
    const int64_t oa = broadcast_flat(ba, index) * m * k, ob = broadcast_flat(bb, index) * k * n;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t p = 0; p < k; ++p) s += av[oa + i * k + p] * bv[ob + p * n + j];
        out.push_back(s);
      }
  }
  return out;
}

void expect_matches_naive(const Tensor& a, const Tensor& b, double tol) {
  Shape expected_shape;
  std::vector<double> expected = naive_matmul(a, b, &expected_shape);
  Tensor c = matmul(a, b);
  ASSERT_EQ(c.shape(), expected_shape) << shape_str(a.shape()) << " @ " << shape_str(b.shape());
  EXPECT_TRUE(c.is_contiguous());
  std::vector<double> got = c.to_vector();
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], expected[i], tol) << "element " << i << " of " << shape_str(a.shape()) << " @ "
                                           << shape_str(b.shape());
}

Tensor randn(const Shape& shape, Generator& gen, DType dtype = DType::F64) {
  return rand_uniform(shape, -1.0, 1.0, gen, dtype);
}

// A [rows, cols] view of fresh [cols, rows] storage.
Tensor transposed(const Shape& shape, Generator& gen, DType dtype = DType::F64) {
  Shape base = shape;
  std::swap(base[base.size() - 1], base[base.size() - 2]);
  return transpose(randn(base, gen, dtype), -1, -2);
}

TEST(Matmul, HandComputed2x2) {
  Tensor a = from_vector({1, 2, 3, 4}, {2, 2}, DType::F64);
  Tensor b = from_vector({5, 6, 7, 8}, {2, 2}, DType::F64);
  EXPECT_EQ(matmul(a, b).to_vector(), (std::vector<double>{19, 22, 43, 50}));
  EXPECT_EQ(matmul(transpose(a, 0, 1), b).to_vector(), (std::vector<double>{26, 30, 38, 44}));
}

TEST(Matmul, PlainMatchesNaiveLoopFloat64AndFloat32) {
  Generator gen(1);
  expect_matches_naive(randn({5, 7}, gen), randn({7, 3}, gen), 1e-12);
  expect_matches_naive(randn({33, 65}, gen), randn({65, 17}, gen), 1e-12);
  expect_matches_naive(randn({5, 7}, gen, DType::F32), randn({7, 3}, gen, DType::F32), 1e-5);
  expect_matches_naive(randn({33, 65}, gen, DType::F32), randn({65, 17}, gen, DType::F32), 1e-4);
}

TEST(Matmul, TransposedViewOperandsMatchNaiveLoop) {
  Generator gen(2);
  for (DType dt : {DType::F64, DType::F32}) {
    const double tol = dt == DType::F64 ? 1e-12 : 1e-5;
    Tensor at = transposed({6, 4}, gen, dt), bt = transposed({4, 5}, gen, dt);
    ASSERT_FALSE(at.is_contiguous());
    ASSERT_FALSE(bt.is_contiguous());
    expect_matches_naive(at, randn({4, 5}, gen, dt), tol);
    expect_matches_naive(randn({6, 4}, gen, dt), bt, tol);
    expect_matches_naive(at, bt, tol);
    // Batched transposes, and a column slice whose rows keep a leading stride.
    expect_matches_naive(transposed({3, 6, 4}, gen, dt), transposed({3, 4, 5}, gen, dt), tol);
    expect_matches_naive(narrow(randn({6, 9}, gen, dt), 1, 2, 4), narrow(randn({7, 5}, gen, dt), 0, 1, 4), tol);
  }
}

TEST(Matmul, LayoutsBlasCannotReadAreCopiedFirst) {
  Generator gen(3);
  // Every other column: neither axis has unit stride.
  Tensor a = slice(randn({4, 10}, gen), 1, 0, 10, 2);
  expect_matches_naive(a, randn({5, 3}, gen), 1e-12);
  // A broadcast row (stride 0 along rows) on both sides.
  expect_matches_naive(expand(randn({1, 5}, gen), {4, 5}), expand(randn({5, 1}, gen), {5, 3}), 1e-12);
}

TEST(Matmul, BatchedAndBroadcastBatchesMatchNaiveLoop) {
  Generator gen(4);
  for (DType dt : {DType::F64, DType::F32}) {
    const double tol = dt == DType::F64 ? 1e-12 : 1e-5;
    expect_matches_naive(randn({3, 4, 5}, gen, dt), randn({3, 5, 2}, gen, dt), tol);
    expect_matches_naive(randn({2, 1, 3, 4}, gen, dt), randn({3, 4, 2}, gen, dt), tol);
    expect_matches_naive(randn({2, 3, 4, 5}, gen, dt), randn({5, 6}, gen, dt), tol);        // b shared
    expect_matches_naive(randn({4, 5}, gen, dt), randn({2, 3, 5, 6}, gen, dt), tol);        // a shared
    expect_matches_naive(randn({2, 1, 4, 5}, gen, dt), randn({1, 3, 5, 2}, gen, dt), tol);  // both broadcast
    expect_matches_naive(transposed({2, 3, 4, 5}, gen, dt), randn({5, 6}, gen, dt), tol);   // shared b, a^T
    // Many small products (spread over threads).
    expect_matches_naive(randn({5000, 4, 4}, gen, dt), randn({5000, 4, 3}, gen, dt), tol);
  }
  // A batch slice whose entries are not adjacent still folds correctly or not at all.
  Tensor a = slice(randn({6, 3, 4}, gen), 0, 0, 6, 2);
  expect_matches_naive(a, randn({4, 2}, gen), 1e-12);
}

TEST(Matmul, VectorOperands) {
  Tensor a = from_vector({1, 2, 3, 4, 5, 6}, {2, 3}, DType::F64);
  Tensor v = from_vector({1, 0, -1}, {3}, DType::F64);
  Tensor mv = matmul(a, v);
  EXPECT_EQ(mv.shape(), (Shape{2}));
  EXPECT_EQ(mv.to_vector(), (std::vector<double>{-2, -2}));
  Tensor w = from_vector({1, -1}, {2}, DType::F64);
  Tensor vm = matmul(w, a);
  EXPECT_EQ(vm.shape(), (Shape{3}));
  EXPECT_EQ(vm.to_vector(), (std::vector<double>{-3, -3, -3}));
  Tensor dot = matmul(v, v);
  EXPECT_EQ(dot.shape(), (Shape{}));
  EXPECT_EQ(dot.item(), 2.0);
}

TEST(Matmul, EmptyInnerDimensionGivesZeros) {
  Tensor c = matmul(zeros({3, 0}, DType::F64), zeros({0, 2}, DType::F64));
  EXPECT_EQ(c.shape(), (Shape{3, 2}));
  EXPECT_EQ(c.to_vector(), std::vector<double>(6, 0.0));
  EXPECT_EQ(matmul(zeros({0, 4}), zeros({4, 2})).shape(), (Shape{0, 2}));
  Tensor a = zeros({2, 3, 0}, DType::F64).set_requires_grad(true);
  Tensor b = zeros({0, 2}, DType::F64).set_requires_grad(true);
  matmul(a, b).backward(ones({2, 3, 2}, DType::F64));
  EXPECT_EQ(a.grad().shape(), a.shape());
  EXPECT_EQ(b.grad().shape(), b.shape());
}

TEST(Matmul, ErrorsNameTheOpAndBothShapes) {
  EXPECT_THAT(error_of([] { matmul(zeros({2, 3}), zeros({4, 5})); }),
              HasSubstr("matmul: inner dimensions differ: [2, 3] @ [4, 5]"));
  EXPECT_THAT(error_of([] { matmul(zeros({2, 3}), zeros({4})); }),
              HasSubstr("matmul: inner dimensions differ: [2, 3] @ [4]"));
  std::string dtype = error_of([] { matmul(zeros({2, 3}), zeros({3, 5}, DType::F64)); });
  EXPECT_THAT(dtype, HasSubstr("matmul"));
  EXPECT_THAT(dtype, HasSubstr("[2, 3]"));
  EXPECT_THAT(dtype, HasSubstr("[3, 5]"));
  EXPECT_THAT(dtype, HasSubstr("float64"));
  std::string batch = error_of([] { matmul(zeros({2, 3, 4}), zeros({5, 4, 2})); });
  EXPECT_THAT(batch, HasSubstr("matmul: batch dimensions do not broadcast: [2, 3, 4] @ [5, 4, 2]"));
  EXPECT_THAT(error_of([] { matmul(zeros({2, 3}, DType::I64), zeros({3, 2}, DType::I64)); }),
              HasSubstr("matmul: expects float32 or float64"));
  EXPECT_THAT(error_of([] { linear(zeros({2, 3}), zeros({4, 5})); }),
              HasSubstr("linear: input [2, 3] does not end in the weight's input size: weight [4, 5]"));
  EXPECT_THAT(error_of([] { linear(zeros({2, 5}), zeros({4, 5}), zeros({3})); }),
              HasSubstr("linear: bias [3] does not match weight [4, 5]"));
}

TEST(Linear, EqualsMatmulWithTransposedWeightPlusBias) {
  Generator gen(5);
  for (DType dt : {DType::F64, DType::F32}) {
    const double tol = dt == DType::F64 ? 1e-12 : 1e-5;
    Tensor x = randn({2, 3, 4}, gen, dt), w = randn({5, 4}, gen, dt), b = randn({5}, gen, dt);
    auto expect_near = [tol](const Tensor& got, const Tensor& want) {
      ASSERT_EQ(got.shape(), want.shape());
      std::vector<double> g = got.to_vector(), e = want.to_vector();
      for (size_t i = 0; i < g.size(); ++i) ASSERT_NEAR(g[i], e[i], tol) << "element " << i;
    };
    expect_near(linear(x, w, b), add(matmul(x, transpose(w, 0, 1)), b));
    expect_near(linear(x, w), matmul(x, transpose(w, 0, 1)));
    // A transposed weight view and a non-contiguous input.
    Tensor wt = transposed({5, 4}, gen, dt), xt = transposed({3, 4}, gen, dt);
    expect_near(linear(xt, wt, b), add(matmul(xt, transpose(wt, 0, 1)), b));
    // A single vector input.
    Tensor v = randn({4}, gen, dt);
    expect_near(linear(v, w, b), add(matmul(w, v), b));
  }
}

// grad = sum over all elements of out * G for a fixed G: backward seeded with G.
TEST(MatmulGrad, BroadcastBatchGradientsAreSummedOverTheBroadcastAxes) {
  Generator gen(6);
  Tensor a = randn({2, 1, 3, 4}, gen).set_requires_grad(true);
  Tensor b = randn({3, 4, 2}, gen).set_requires_grad(true);
  Tensor out = matmul(a, b);
  ASSERT_EQ(out.shape(), (Shape{2, 3, 3, 2}));
  Tensor g = randn(out.shape(), gen);
  out.backward(g);
  ASSERT_EQ(a.grad().shape(), a.shape());
  ASSERT_EQ(b.grad().shape(), b.shape());

  // By hand: out[i,j] = a[i,0] @ b[j], so da[i,0] = sum_j G[i,j] b[j]^T and
  // db[j] = sum_i a[i,0]^T G[i,j].
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t r = 0; r < 3; ++r)
      for (int64_t c = 0; c < 4; ++c) {
        double want = 0;
        for (int64_t j = 0; j < 3; ++j)
          for (int64_t q = 0; q < 2; ++q) want += g.at({i, j, r, q}) * b.at({j, c, q});
        EXPECT_NEAR(a.grad().at({i, 0, r, c}), want, 1e-12);
      }
  for (int64_t j = 0; j < 3; ++j)
    for (int64_t r = 0; r < 4; ++r)
      for (int64_t c = 0; c < 2; ++c) {
        double want = 0;
        for (int64_t i = 0; i < 2; ++i)
          for (int64_t p = 0; p < 3; ++p) want += a.at({i, 0, p, r}) * g.at({i, j, p, c});
        EXPECT_NEAR(b.grad().at({j, r, c}), want, 1e-12);
      }
}

TEST(MatmulGrad, SharedMatrixGradientContractsOverTheBatch) {
  Generator gen(7);
  Tensor a = transposed({2, 3, 4}, gen).set_requires_grad(true);  // non-contiguous batch operand
  Tensor b = randn({4, 2}, gen).set_requires_grad(true);
  Tensor out = matmul(a, b);
  Tensor g = randn(out.shape(), gen);
  out.backward(g);
  for (int64_t r = 0; r < 4; ++r)
    for (int64_t c = 0; c < 2; ++c) {
      double want = 0;
      for (int64_t i = 0; i < 2; ++i)
        for (int64_t p = 0; p < 3; ++p) want += a.at({i, p, r}) * g.at({i, p, c});
      EXPECT_NEAR(b.grad().at({r, c}), want, 1e-12);
    }
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t p = 0; p < 3; ++p)
      for (int64_t r = 0; r < 4; ++r) {
        double want = 0;
        for (int64_t c = 0; c < 2; ++c) want += g.at({i, p, c}) * b.at({r, c});
        EXPECT_NEAR(a.grad().at({i, p, r}), want, 1e-12);
      }
}

TEST(MatmulGrad, OnlyRequestedGradientsAreComputed) {
  Generator gen(8);
  Tensor a = randn({3, 4}, gen).set_requires_grad(true);
  Tensor b = randn({4, 2}, gen);
  matmul(a, b).backward(ones({3, 2}, DType::F64));
  EXPECT_TRUE(a.grad().defined());
  EXPECT_FALSE(b.grad().defined());
}

TEST(LinearGrad, MatchesTheComposedMatmulGradients) {
  Generator gen(9);
  Tensor x0 = randn({2, 3, 4}, gen), w0 = randn({5, 4}, gen), b0 = randn({5}, gen);
  Tensor g = randn({2, 3, 5}, gen);
  auto leaf = [](const Tensor& t) { return clone(t).detach().set_requires_grad(true); };
  Tensor x1 = leaf(x0), w1 = leaf(w0), b1 = leaf(b0);
  linear(x1, w1, b1).backward(g);
  Tensor x2 = leaf(x0), w2 = leaf(w0), b2 = leaf(b0);
  add(matmul(x2, transpose(w2, 0, 1)), b2).backward(g);
  auto expect_near = [](const Tensor& got, const Tensor& want) {
    ASSERT_EQ(got.shape(), want.shape());
    std::vector<double> gv = got.to_vector(), wv = want.to_vector();
    for (size_t i = 0; i < gv.size(); ++i) ASSERT_NEAR(gv[i], wv[i], 1e-12);
  };
  expect_near(x1.grad(), x2.grad());
  expect_near(w1.grad(), w2.grad());
  expect_near(b1.grad(), b2.grad());
}

TEST(BenchMatmul, SmallRunSucceedsAndBadFlagsThrow) {
  testing::internal::CaptureStdout();
  int rc = run_bench_matmul({"--size", "64", "--reps", "2", "--warmup", "1"});
  std::string out = testing::internal::GetCapturedStdout();
  EXPECT_EQ(rc, 0);
  EXPECT_THAT(out, HasSubstr("openblas: its own threads"));
  // The two GEMMs block differently: they must agree to the rounding bound
  // the bench derives from |A||B|, not bit for bit.
  EXPECT_THAT(out, HasSubstr("max abs difference engine vs openblas: "));
  EXPECT_THAT(out, HasSubstr("(rounding bound "));
  EXPECT_THAT(out, HasSubstr(": within)"));
  EXPECT_THAT(out, HasSubstr("matmul 64: engine "));
  EXPECT_THAT(out, HasSubstr("ratio "));
  EXPECT_THROW(run_bench_matmul({"--no-such-flag"}), UsageError);
  EXPECT_THROW(run_bench_matmul({"--dtype", "int8"}), UsageError);
  testing::internal::CaptureStdout();
  EXPECT_EQ(run_bench_matmul({"--help"}), 0);
  EXPECT_THAT(testing::internal::GetCapturedStdout(), HasSubstr("--size"));
}

}  // namespace
}  // namespace attn
