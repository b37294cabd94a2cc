// The join family (concat, stack, split, chunk, pad) and the index family
// (index_select, embedding, gather, scatter_add, one_hot): forward values
// against hand computation, gradient accumulation for repeated indices, views,
// and error messages.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "test_util.h"
#include "attn/engine/error.h"
#include "attn/ops/binary/binary.h"
#include "attn/ops/index/index.h"
#include "attn/ops/join/join.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/ops/view/view.h"

namespace attn {
namespace {

using namespace testing_support;

using Values = std::vector<double>;

void expect_mentions(const std::string& message, const std::vector<std::string>& parts) {
  for (const std::string& p : parts)
    EXPECT_NE(message.find(p), std::string::npos) << "'" << p << "' not in: " << message;
}

Tensor leaf(const Values& v, const Shape& shape, DType dtype = DType::F64) {
  return from_vector(v, shape, dtype).set_requires_grad(true);
}

// Backpropagates sum(y * w) so each output element's gradient is its own weight.
void backward_weighted(const Tensor& y, const Values& w) { sum(y * from_vector(w, y.shape(), y.dtype())).backward(); }

// ---- join ----

TEST(Concat, JoinsTransposedAndContiguousInputsAlongAxis1) {
  Tensor a = from_vector({1, 2, 3, 4}, {2, 2});
  Tensor b = transpose(from_vector({5, 6, 7, 8}, {2, 2}), 0, 1);  // [[5, 7], [6, 8]]
  Tensor c = from_vector({9, 10}, {2, 1});
  Tensor y = concat({a, b, c}, 1);
  EXPECT_EQ(y.shape(), (Shape{2, 5}));
  EXPECT_EQ(y.to_vector(), (Values{1, 2, 5, 7, 9, 3, 4, 6, 8, 10}));
  EXPECT_EQ(concat({a, c}, -1).to_vector(), (Values{1, 2, 9, 3, 4, 10}));
}

TEST(Concat, AlongAxis0AndGradientSlices) {
  Tensor a = leaf({1, 2, 3}, {1, 3});
  Tensor b = leaf({4, 5, 6, 7, 8, 9}, {2, 3});
  Tensor y = concat({a, b}, 0);
  EXPECT_EQ(y.to_vector(), (Values{1, 2, 3, 4, 5, 6, 7, 8, 9}));
  backward_weighted(y, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  EXPECT_EQ(a.grad().shape(), (Shape{1, 3}));
  EXPECT_EQ(a.grad().to_vector(), (Values{1, 2, 3}));
  EXPECT_EQ(b.grad().to_vector(), (Values{4, 5, 6, 7, 8, 9}));
}

TEST(Concat, ShapeMismatchNamesOpAndBothShapes) {
  std::string m = error_of([] { concat({zeros({2, 3}), zeros({3, 4})}, 1); });
  expect_mentions(m, {"concat", "[2, 3]", "[3, 4]"});
  expect_mentions(error_of([] { concat({zeros({2}), zeros({2}, DType::F64)}, 0); }), {"concat", "float64"});
  expect_mentions(error_of([] { concat({}, 0); }), {"concat"});
}

TEST(Stack, NewAxisInFrontAndInTheMiddle) {
  Tensor a = from_vector({1, 2}, {2});
  Tensor b = from_vector({3, 4}, {2});
  Tensor s0 = stack({a, b}, 0);
  EXPECT_EQ(s0.shape(), (Shape{2, 2}));
  EXPECT_EQ(s0.to_vector(), (Values{1, 2, 3, 4}));
  Tensor s1 = stack({a, b}, 1);
  EXPECT_EQ(s1.to_vector(), (Values{1, 3, 2, 4}));
  expect_mentions(error_of([&] { stack({a, zeros({3})}, 0); }), {"stack", "[2]", "[3]"});
}

TEST(Stack, GradientGoesBackToEachInput) {
  Tensor a = leaf({1, 2}, {2});
  Tensor b = leaf({3, 4}, {2});
  backward_weighted(stack({a, b}, 1), {10, 20, 30, 40});  // [[a0, b0], [a1, b1]]
  EXPECT_EQ(a.grad().to_vector(), (Values{10, 30}));
  EXPECT_EQ(b.grad().to_vector(), (Values{20, 40}));
}

TEST(Split, PartsAreViewsSharingStorage) {
  Tensor x = from_vector({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, {2, 5}, DType::F64);
  std::vector<Tensor> parts = split(x, {2, 3}, 1);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].shape(), (Shape{2, 2}));
  EXPECT_EQ(parts[1].shape(), (Shape{2, 3}));
  EXPECT_EQ(parts[0].to_vector(), (Values{0, 1, 5, 6}));
  EXPECT_EQ(parts[1].to_vector(), (Values{2, 3, 4, 7, 8, 9}));
  for (const Tensor& p : parts) EXPECT_EQ(p.storage(), x.storage());
  write_element(x, 7, 70.0);  // x[1][2] is parts[1][1][0]
  EXPECT_EQ(parts[1].at({1, 0}), 70.0);
}

TEST(Split, SizesMustSumToTheAxis) {
  std::string m = error_of([] { split(zeros({3, 5}), {2, 2}, 1); });
  expect_mentions(m, {"split", "[2, 2]", "4", "[3, 5]", "5"});
}

TEST(Split, GradientOfEachPartLandsInItsRange) {
  Tensor x = leaf({1, 2, 3, 4, 5}, {5});
  std::vector<Tensor> p = split(x, {1, 3, 1}, 0);
  sum(concat({p[0] * 2.0, p[1] * from_vector({10, 20, 30}, {3}, DType::F64), p[2] * -1.0}, 0)).backward();
  EXPECT_EQ(x.grad().to_vector(), (Values{2, 10, 20, 30, -1}));
}

TEST(Chunk, EqualViewsAndIndivisibleError) {
  Tensor x = from_vector({0, 1, 2, 3, 4, 5}, {3, 2});
  std::vector<Tensor> c = chunk(x, 3, 0);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[2].to_vector(), (Values{4, 5}));
  EXPECT_EQ(c[1].storage(), x.storage());
  expect_mentions(error_of([&] { chunk(x, 2, 0); }), {"chunk", "[3, 2]", "2"});
}

TEST(Pad, ConstantOnBothSidesAndGradientIsTheInner) {
  Tensor x = leaf({1, 2, 3, 4}, {2, 2});
  Tensor y = pad(x, 1, 1, 2, 9.0);
  EXPECT_EQ(y.shape(), (Shape{2, 5}));
  EXPECT_EQ(y.to_vector(), (Values{9, 1, 2, 9, 9, 9, 3, 4, 9, 9}));
  backward_weighted(y, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
  EXPECT_EQ(x.grad().to_vector(), (Values{2, 3, 7, 8}));
  EXPECT_EQ(pad(from_vector({5}, {1}), 0, 2, 0).to_vector(), (Values{0, 0, 5}));
  expect_mentions(error_of([&] { pad(x, 0, -1, 0); }), {"pad", "-1"});
}

// ---- index ----

TEST(IndexSelect, ColumnsWithRepeatsAndRowsOfATransposedInput) {
  Tensor x = from_vector({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor cols = index_select(x, 1, from_indices({2, 0, 2}, {3}));
  EXPECT_EQ(cols.shape(), (Shape{2, 3}));
  EXPECT_EQ(cols.to_vector(), (Values{3, 1, 3, 6, 4, 6}));
  Tensor xt = transpose(x, 0, 1);  // [[1, 4], [2, 5], [3, 6]]
  EXPECT_EQ(index_select(xt, 0, from_indices({1, 1, 2}, {3})).to_vector(), (Values{2, 5, 2, 5, 3, 6}));
  EXPECT_EQ(index_select(x, 0, empty({0}, DType::I64)).shape(), (Shape{0, 3}));
}

TEST(IndexSelect, RepeatedIndicesAccumulateGradient) {
  Tensor x = leaf({1, 2, 3, 4, 5, 6}, {3, 2});
  Tensor y = index_select(x, 0, from_indices({2, 0, 2, 2}, {4}));
  backward_weighted(y, {1, 2, 3, 4, 5, 6, 7, 8});
  // Row 2 receives output rows 0, 2 and 3; row 0 receives row 1; row 1 nothing.
  EXPECT_EQ(x.grad().to_vector(), (Values{3, 4, 0, 0, 1 + 5 + 7, 2 + 6 + 8}));
}

TEST(Embedding, LooksUpRowsForTwoDimensionalIds) {
  Tensor w = from_vector({0, 1, 10, 11, 20, 21, 30, 31}, {4, 2});
  Tensor y = embedding(w, from_indices({3, 0, 3, 1, 2, 2}, {2, 3}));
  EXPECT_EQ(y.shape(), (Shape{2, 3, 2}));
  EXPECT_EQ(y.to_vector(), (Values{30, 31, 0, 1, 30, 31, 10, 11, 20, 21, 20, 21}));
}

TEST(Embedding, RepeatedIdsAccumulateGradient) {
  Tensor w = leaf({0, 1, 10, 11, 20, 21}, {3, 2});
  Tensor y = embedding(w, from_indices({1, 1, 0, 1}, {2, 2}));
  backward_weighted(y, {1, 2, 3, 4, 5, 6, 7, 8});
  EXPECT_EQ(w.grad().shape(), (Shape{3, 2}));
  EXPECT_EQ(w.grad().to_vector(), (Values{5, 6, 1 + 3 + 7, 2 + 4 + 8, 0, 0}));
}

TEST(Embedding, LargeTableMatchesSerialSums) {
  // Big enough for the parallel paths: many column blocks, many repeated ids.
  const int64_t rows = 37, dim = 300, n = 1500;
  std::vector<int64_t> ids(n);
  for (int64_t i = 0; i < n; ++i) ids[i] = (i * 7 + i / 11) % rows;
  Values wv(rows * dim), gv(n * dim);
  for (int64_t i = 0; i < rows * dim; ++i) wv[i] = 0.001 * static_cast<double>(i % 997);
  for (int64_t i = 0; i < n * dim; ++i) gv[i] = 0.01 * static_cast<double>((i * 13) % 101) - 0.5;
  Tensor w = leaf(wv, {rows, dim});
  Tensor y = embedding(w, from_indices(ids, {n}));
  Values out = y.to_vector();
  Values expected_grad(rows * dim, 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t d = 0; d < dim; ++d) {
      ASSERT_EQ(out[i * dim + d], wv[ids[i] * dim + d]);
      expected_grad[ids[i] * dim + d] += gv[i * dim + d];
    }
  y.backward(from_vector(gv, {n, dim}, DType::F64));
  Values got = w.grad().to_vector();
  for (size_t k = 0; k < got.size(); ++k) ASSERT_DOUBLE_EQ(got[k], expected_grad[k]) << "element " << k;
}

TEST(Embedding, WorksInFloat32) {
  Tensor w = leaf({1, 2, 3, 4}, {2, 2}, DType::F32);
  Tensor y = embedding(w, from_indices({1, 1}, {2}));
  EXPECT_EQ(y.dtype(), DType::F32);
  EXPECT_EQ(y.to_vector(), (Values{3, 4, 3, 4}));
  sum(y).backward();
  EXPECT_EQ(w.grad().dtype(), DType::F32);
  EXPECT_EQ(w.grad().to_vector(), (Values{0, 0, 2, 2}));
}

TEST(Gather, AlongEachAxisLikeTheDefinition) {
  Tensor x = from_vector({1, 2, 3, 4, 5, 6}, {2, 3});
  // out[i][j] = x[i][index[i][j]]
  Tensor g1 = gather(x, 1, from_indices({2, 2, 0, 1}, {2, 2}));
  EXPECT_EQ(g1.shape(), (Shape{2, 2}));
  EXPECT_EQ(g1.to_vector(), (Values{3, 3, 4, 5}));
  // out[i][j] = x[index[i][j]][j], index narrower than x on axis 1.
  Tensor g0 = gather(x, 0, from_indices({1, 0, 1, 1, 0, 0}, {3, 2}));
  EXPECT_EQ(g0.to_vector(), (Values{4, 2, 4, 5, 1, 2}));
  // A transposed input: xt = [[1, 4], [2, 5], [3, 6]].
  Tensor xt = transpose(x, 0, 1);
  EXPECT_EQ(gather(xt, 1, from_indices({1, 0, 0}, {3, 1})).to_vector(), (Values{4, 2, 3}));
}

TEST(Gather, RepeatedIndicesAccumulateGradient) {
  Tensor x = leaf({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor y = gather(x, 1, from_indices({2, 2, 0, 1}, {2, 2}));
  backward_weighted(y, {1, 2, 3, 4});
  EXPECT_EQ(x.grad().to_vector(), (Values{0, 0, 3, 3, 4, 0}));
}

TEST(ScatterAdd, AddsSourceIntoBaseAndDifferentiatesBoth) {
  Tensor base = leaf({1, 1, 1, 1, 1, 1}, {3, 2});
  Tensor src = leaf({10, 20, 30, 40}, {2, 2});
  // out[index[i][j]][j] += src[i][j] along axis 0.
  Tensor index = from_indices({2, 0, 2, 2}, {2, 2});
  Tensor y = scatter_add(base, 0, index, src);
  EXPECT_EQ(y.to_vector(), (Values{1, 21, 1, 1, 41, 41}));
  EXPECT_EQ(base.to_vector(), (Values{1, 1, 1, 1, 1, 1}));  // base itself untouched
  backward_weighted(y, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(base.grad().to_vector(), (Values{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(src.grad().to_vector(), (Values{5, 2, 5, 6}));  // gather of the weights
}

TEST(ScatterAdd, SourceLargerThanIndexGetsZeroGradientOutsideIt) {
  Tensor base = leaf({0, 0, 0}, {1, 3});
  Tensor src = leaf({1, 2, 3, 4}, {2, 2});
  Tensor y = scatter_add(base, 1, from_indices({2}, {1, 1}), src);
  EXPECT_EQ(y.to_vector(), (Values{0, 0, 1}));
  backward_weighted(y, {1, 2, 3});
  EXPECT_EQ(src.grad().shape(), (Shape{2, 2}));
  EXPECT_EQ(src.grad().to_vector(), (Values{3, 0, 0, 0}));
}

TEST(ScatterAdd, LargeGatherAndScatterMatchSerialLoops) {
  // Enough lines along axis 0 for the threaded paths; many repeated targets.
  const int64_t rows = 50, cols = 400, k = 200;
  std::vector<int64_t> idx(k * cols);
  Values xv(rows * cols), sv(k * cols);
  for (int64_t i = 0; i < k * cols; ++i) {
    idx[i] = (i * 31 + i / 7) % rows;
    sv[i] = 0.25 * static_cast<double>(i % 17);
  }
  for (int64_t i = 0; i < rows * cols; ++i) xv[i] = static_cast<double>(i % 101);
  Tensor index = from_indices(idx, {k, cols});
  Values gathered = gather(from_vector(xv, {rows, cols}, DType::F64), 0, index).to_vector();
  Tensor src = from_vector(sv, {k, cols}, DType::F64);
  Values scattered = scatter_add(zeros({rows, cols}, DType::F64), 0, index, src).to_vector();
  Values expected(rows * cols, 0.0);
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      ASSERT_EQ(gathered[i * cols + j], xv[idx[i * cols + j] * cols + j]);
      expected[idx[i * cols + j] * cols + j] += sv[i * cols + j];
    }
  for (size_t e = 0; e < expected.size(); ++e) ASSERT_DOUBLE_EQ(scattered[e], expected[e]) << "element " << e;
}

TEST(OneHot, RowsWithOneOneEach) {
  Tensor h = one_hot(from_indices({2, 0, 1, 2}, {2, 2}), 3);
  EXPECT_EQ(h.shape(), (Shape{2, 2, 3}));
  EXPECT_EQ(h.dtype(), DType::F32);
  EXPECT_EQ(h.to_vector(), (Values{0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 0, 1}));
  EXPECT_EQ(one_hot(from_indices({1}, {1}), 2, DType::F64).dtype(), DType::F64);
  EXPECT_FALSE(h.requires_grad());
}

TEST(IndexErrors, OutOfRangeNamesOpValueAndSize) {
  expect_mentions(error_of([] { embedding(zeros({10, 4}), from_indices({3, 12}, {2})); }),
                  {"embedding", "id 12", "10 rows"});
  expect_mentions(error_of([] { index_select(zeros({3, 5}), 1, from_indices({0, 7}, {2})); }),
                  {"index_select", "7", "size 5", "[3, 5]"});
  expect_mentions(error_of([] { index_select(zeros({3}), 0, from_indices({-1}, {1})); }),
                  {"index_select", "-1", "size 3"});
  expect_mentions(error_of([] { gather(zeros({2, 3}), 1, from_indices({0, 3}, {2, 1})); }),
                  {"gather", "3", "size 3", "[2, 3]"});
  expect_mentions(error_of([] { scatter_add(zeros({2}), 0, from_indices({4}, {1}), zeros({1})); }),
                  {"scatter_add", "4", "size 2"});
  expect_mentions(error_of([] { one_hot(from_indices({3}, {1}), 3); }), {"one_hot", "3 classes"});
  expect_mentions(error_of([] { index_add(zeros({3, 2}), 0, from_indices({0, 3}, {2}), zeros({2, 2})); }),
                  {"index_add", "3", "size 3", "[3, 2]"});
}

TEST(IndexErrors, IndexMustBeInt64) {
  Tensor float_index = from_vector({0, 1}, {2});
  expect_mentions(error_of([&] { index_select(zeros({3}), 0, float_index); }), {"index_select", "int64", "float32"});
  expect_mentions(error_of([&] { embedding(zeros({3, 2}), float_index); }), {"embedding", "int64"});
  expect_mentions(error_of([&] { gather(zeros({3}), 0, float_index); }), {"gather", "int64"});
  expect_mentions(error_of([&] { scatter_add(zeros({3}), 0, float_index, zeros({2})); }), {"scatter_add", "int64"});
  expect_mentions(error_of([&] { one_hot(float_index, 3); }), {"one_hot", "int64"});
}

TEST(IndexErrors, ShapesThatDoNotFit) {
  expect_mentions(error_of([] { gather(zeros({2, 3}), 1, from_indices({0, 0, 0}, {3, 1})); }),
                  {"gather", "[3, 1]", "[2, 3]"});
  expect_mentions(error_of([] { index_select(zeros({3}), 0, from_indices({0, 0}, {1, 2})); }),
                  {"index_select", "1-D", "[1, 2]"});
  expect_mentions(error_of([] { embedding(zeros({3}), from_indices({0}, {1})); }), {"embedding", "[3]"});
  expect_mentions(error_of([] { index_add(zeros({3, 2}), 0, from_indices({0, 1}, {2}), zeros({3, 2})); }),
                  {"index_add", "src must have shape [2, 2]", "[3, 2]"});
  expect_mentions(error_of([] { index_add(zeros({3, 2}), 0, from_indices({0}, {1}), zeros({1, 2}, DType::F64)); }),
                  {"index_add", "float32", "float64"});
}

// index_add is index_select's transpose: rows added where the index says,
// repeats accumulating, the base kept elsewhere.
TEST(IndexAdd, AddsRowsAtTheIndexOntoTheBase) {
  Tensor base = from_vector({1, 2, 3, 4, 5, 6}, {3, 2});
  Tensor src = from_vector({10, 20, 30, 40, 50, 60}, {3, 2});
  Tensor out = index_add(base, 0, from_indices({2, 0, 2}, {3}), src);
  EXPECT_EQ(out.to_vector(), std::vector<double>({31, 42, 3, 4, 65, 86}));
  EXPECT_EQ(base.to_vector(), std::vector<double>({1, 2, 3, 4, 5, 6}));  // not modified
}

}  // namespace
}  // namespace attn
