// The gradient of a weight shared over a batch axis (ops/matmul/matmul.cpp,
// shared_operand_gradient, and the matmul_summed kernels): the engine's
// float32 GEMM reads the depth rows where they are (sgemm_avx512_depth_rows)
// and must give the bits of the call on gathered rows; through the op, with
// either float32 GEMM and any thread count, the gradient is within rounding
// of the float64 one; rows are gathered only where a GEMM cannot read them.
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "attn/engine/autograd.h"
#include "attn/engine/copy.h"
#include "attn/engine/random.h"
#include "attn/ops/binary/binary.h"
#include "attn/ops/matmul/matmul.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/ops/cpu/sgemm_avx512.h"
#include "attn/ops/view/view.h"
#include "attn/train/bench/op_profiler.h"

namespace attn {
namespace {

// Restores the OpenMP thread count and the automatic GEMM choice.
class Settings {
 public:
  Settings(int threads, CpuSgemm choice) : saved_(omp_get_max_threads()) {
    omp_set_num_threads(threads);
    set_cpu_sgemm(choice);
  }
  ~Settings() {
    omp_set_num_threads(saved_);
    set_cpu_sgemm(CpuSgemm::automatic);
  }

 private:
  int saved_;
};

TEST(MatmulSummed, DepthRowsGetTheBitsOfTheGatheredCall) {
  if (!sgemm_avx512_available()) GTEST_SKIP() << "this CPU has no AVX-512F: the engine's float32 GEMM is not used here";
  // 13 groups of 37 depth rows (481 deep: two depth blocks that cut a group),
  // rows padded past m and n, gaps between groups.
  const int64_t m = 29, n = 45, groups = 13, rows = 37, k = groups * rows;
  const SgemmRows a_rows{rows, m + 3, rows * (m + 3) + 11}, b_rows{rows, n + 5, rows * (n + 5) + 2};
  std::mt19937 gen(21);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> a(static_cast<size_t>(groups * a_rows.group_stride)), b(static_cast<size_t>(groups * b_rows.group_stride));
  for (float& x : a) x = u(gen);
  for (float& x : b) x = u(gen);
  std::vector<float> a_gathered(static_cast<size_t>(k * m)), b_gathered(static_cast<size_t>(k * n));
  for (int64_t p = 0; p < k; ++p) {
    std::copy_n(a.begin() + a_rows.at(p), m, a_gathered.begin() + p * m);
    std::copy_n(b.begin() + b_rows.at(p), n, b_gathered.begin() + p * n);
  }
  std::vector<float> in_place(static_cast<size_t>(m * n), std::nanf("")), gathered(in_place.size());
  sgemm_avx512_depth_rows(m, n, k, a.data(), a_rows, b.data(), b_rows, 0.0f, in_place.data(), n);
  sgemm_avx512(true, false, m, n, k, a_gathered.data(), m, b_gathered.data(), n, 0.0f, gathered.data(), n);
  EXPECT_EQ(in_place, gathered);
  // And within gamma_k sum |a b| of the float64 sum (Higham eq. 3.13).
  const double unit = std::numeric_limits<float>::epsilon() / 2, gamma = (k + 1) * unit / (1 - (k + 1) * unit);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double exact = 0, magnitude = 0;
      for (int64_t p = 0; p < k; ++p) {
        const double x = static_cast<double>(a_gathered[p * m + i]) * b_gathered[p * n + j];
        exact += x;
        magnitude += std::abs(x);
      }
      ASSERT_LE(std::abs(in_place[i * n + j] - exact), gamma * magnitude) << "entry (" << i << ", " << j << ")";
    }
  }
}

struct Layout {
  const char* name;
  Shape x_shape, w_shape;
  bool split_heads;  // x made [B, n, h*d] and split into heads (rows that fold), else stored [B, h, n, d]
};

// d loss / d w for loss = sum(r * (x @ w)): a sum over the batch (and the
// heads' rows) of x^T r.
Tensor weight_gradient(const Layout& layout, const Tensor& x_data, const Tensor& w_data, const Tensor& r) {
  Tensor w = w_data.detach();
  w.set_requires_grad(true);
  Tensor x = x_data;
  if (layout.split_heads) {
    const Shape& s = layout.x_shape;  // [B, h, n, d]
    x = permute(reshape(x_data, {s[0], s[2], s[1], s[3]}), {0, 2, 1, 3});
  }
  sum(matmul(x, w) * r).backward();
  return w.grad();
}

// x as the layout stores it, w, and r the shape of x @ w; U(-1, 1) from `seed`.
struct Operands {
  Tensor x, w, r;
};
Operands make_operands(const Layout& layout, uint64_t seed) {
  Generator gen(seed);
  Shape stored = layout.x_shape;
  if (layout.split_heads) stored = {stored[0], stored[2], stored[1] * stored[3]};
  Shape out_shape = layout.x_shape;
  out_shape.back() = layout.w_shape.back();
  Operands o;
  o.x = rand_uniform(stored, -1.0, 1.0, gen, DType::F32);
  o.w = rand_uniform(layout.w_shape, -1.0, 1.0, gen, DType::F32);
  o.r = rand_uniform(out_shape, -1.0, 1.0, gen, DType::F32);
  return o;
}

TEST(MatmulSummed, SharedWeightGradientIsWithinRoundingWithEitherKernelAndAnyThreadCount) {
  const Layout layouts[] = {
      {"per-head weight, x stored [B, h, n, d]", {6, 2, 20, 33}, {2, 33, 17}, false},
      {"per-head weight, heads split from [B, n, h*d]", {6, 2, 20, 33}, {2, 33, 17}, true},
      {"one weight over a batch of 5", {5, 20, 33}, {33, 17}, false},
  };
  for (const Layout& layout : layouts) {
    SCOPED_TRACE(layout.name);
    const auto [x, w, r] = make_operands(layout, 31);
    const std::vector<double> ref =
        weight_gradient(layout, cast(x, DType::F64), cast(w, DType::F64), cast(r, DType::F64)).to_vector();
    // Each entry sums K = (batch entries x rows) products of magnitude at most 1.
    int64_t K = 1;
    for (size_t i = 0; i + 1 < layout.x_shape.size(); ++i) K *= layout.x_shape[i];
    K /= layout.w_shape.size() == 3 ? layout.w_shape[0] : 1;
    const double unit = std::numeric_limits<float>::epsilon() / 2, unit64 = std::numeric_limits<double>::epsilon() / 2;
    const double bound = ((K + 1) * unit / (1 - (K + 1) * unit) + (K + 1) * unit64 / (1 - (K + 1) * unit64)) * K;
    for (CpuSgemm choice : {CpuSgemm::automatic, CpuSgemm::openblas}) {
      for (int threads : {1, 2, 3}) {
        Settings settings(threads, choice);
        SCOPED_TRACE(std::string(choice == CpuSgemm::automatic ? "automatic" : "openblas") + ", " +
                     std::to_string(threads) + " threads");
        const Tensor grad = weight_gradient(layout, x, w, r);
        ASSERT_EQ(grad.shape(), layout.w_shape);
        const std::vector<double> got = grad.to_vector();
        double largest = 0;
        for (size_t e = 0; e < got.size(); ++e) {
          ASSERT_NEAR(got[e], ref[e], bound) << "entry " << e;
          largest = std::max(largest, std::abs(got[e]));
        }
        EXPECT_GT(largest, 0.0);
        // One path run twice: the same bits.
        EXPECT_EQ(weight_gradient(layout, x, w, r).to_vector(), got);
      }
    }
  }
}

// Bytes the matmul_summed kernel allocates in one backward of sum(r * (x @ w)).
int64_t summed_kernel_bytes(const Layout& layout, CpuSgemm choice) {
  const Operands o = make_operands(layout, 41);
  Settings settings(1, choice);  // one thread: no partial sums
  OpProfiler profiler;
  weight_gradient(layout, o.x, o.w, o.r);
  for (const OpStats& s : profiler.table())
    if (s.op == "matmul_summed") return s.bytes_allocated;
  ADD_FAILURE() << "no matmul_summed call";
  return -1;
}

// The engine's GEMM never copies the rows; OpenBLAS reads rows that continue
// in one stride (a batch of contiguous rows, heads split from [B, n, h*d])
// in place too, and gathers the others (a gradient stored [B, h, n, d]).
TEST(MatmulSummed, RowsAreCopiedOnlyWhenAGemmCannotReadThem) {
  const Layout batch{"one weight over a batch", {5, 20, 33}, {33, 17}, false};
  const Layout split{"heads split from [B, n, h*d]", {6, 2, 20, 33}, {2, 33, 17}, true};
  // The profiler may charge the kernel's output (allocated just before the
  // call) to it: at most that much, never a copy of the rows.
  const int64_t batch_out = 33 * 17 * 4, split_out = 2 * 33 * 17 * 4;
  for (CpuSgemm choice : {CpuSgemm::automatic, CpuSgemm::openblas}) {
    SCOPED_TRACE(choice == CpuSgemm::automatic ? "automatic" : "openblas");
    EXPECT_LE(summed_kernel_bytes(batch, choice), batch_out);  // x's rows alone are 5 * 20 * 33 * 4 bytes
  }
  // Split heads: x's rows fold, the output gradient [B, h, n, e] does not.
  const int64_t gradient_rows_bytes = 6 * 2 * 20 * 17 * 4;
  EXPECT_GE(summed_kernel_bytes(split, CpuSgemm::openblas), gradient_rows_bytes);
  EXPECT_LE(summed_kernel_bytes(split, CpuSgemm::openblas), gradient_rows_bytes + split_out);
  if (sgemm_avx512_available()) {
    EXPECT_LE(summed_kernel_bytes(split, CpuSgemm::automatic), split_out);
  }
}

TEST(MatmulSummed, AnEmptySumGivesAZeroGradient) {
  Generator gen(3);
  const Tensor x = rand_uniform({4, 2, 0, 5}, -1.0, 1.0, gen, DType::F32);
  Tensor w = rand_uniform({2, 5, 3}, -1.0, 1.0, gen, DType::F32);
  w.set_requires_grad(true);
  // Empty rows: the product is empty, so only the gradient's shape and zeros are checked.
  Tensor out = matmul(x, w);
  ASSERT_EQ(out.shape(), Shape({4, 2, 0, 3}));
  (sum(out) + sum(w)).backward();
  const std::vector<double> grad = w.grad().to_vector();
  ASSERT_EQ(w.grad().shape(), w.shape());
  for (double v : grad) EXPECT_EQ(v, 1.0);  // only sum(w)'s ones: the product adds exactly zero
}

}  // namespace
}  // namespace attn
