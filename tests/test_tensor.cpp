// Tensor geometry, views sharing storage, the allocator's counters and the
// seeded generator.
#include <gtest/gtest.h>

#include "attn/engine/allocator.h"
#include "attn/engine/error.h"
#include "attn/engine/random.h"
#include "attn/ops/binary/binary.h"
#include "attn/engine/copy.h"
#include "attn/ops/view/view.h"

namespace attn {
namespace {

TEST(Tensor, ContiguousStridesAndElementAccess) {
  Tensor t = from_vector({1, 2, 3, 4, 5, 6}, {2, 3}, DType::F64);
  EXPECT_EQ(t.strides(), (std::vector<int64_t>{3, 1}));
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_EQ(t.at({1, 2}), 6);
  EXPECT_EQ(t.numel(), 6);
}

TEST(Tensor, TransposeIsAViewWithSwappedStrides) {
  Tensor t = from_vector({1, 2, 3, 4, 5, 6}, {2, 3}, DType::F32);
  Tensor tt = transpose(t, 0, 1);
  EXPECT_EQ(tt.shape(), (Shape{3, 2}));
  EXPECT_EQ(tt.strides(), (std::vector<int64_t>{1, 3}));
  EXPECT_FALSE(tt.is_contiguous());
  EXPECT_EQ(tt.storage(), t.storage());
  EXPECT_EQ(tt.at({2, 1}), 6);
  EXPECT_EQ(contiguous(tt).to_vector(), (std::vector<double>{1, 4, 2, 5, 3, 6}));
}

TEST(Tensor, SliceNarrowAndExpandShareStorage) {
  Tensor t = from_vector({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, {10}, DType::F64);
  Tensor s = slice(t, 0, 1, 9, 3);  // 1, 4, 7
  EXPECT_EQ(s.to_vector(), (std::vector<double>{1, 4, 7}));
  EXPECT_EQ(s.offset(), 1);
  EXPECT_EQ(s.strides()[0], 3);
  Tensor n = narrow(t, 0, 8, 2);
  EXPECT_EQ(n.to_vector(), (std::vector<double>{8, 9}));
  Tensor e = expand(reshape(narrow(t, 0, 0, 3), {3, 1}), {3, 4});
  EXPECT_EQ(e.strides()[1], 0);
  EXPECT_EQ(e.at({2, 3}), 2);
  write_element(t, 4, 40);  // a write through the base is visible in the view
  EXPECT_EQ(s.at({1}), 40);
}

TEST(Tensor, ReshapeOfNonContiguousCopies) {
  Tensor t = from_vector({1, 2, 3, 4, 5, 6}, {2, 3}, DType::F64);
  Tensor r = reshape(transpose(t, 0, 1), {6});
  EXPECT_NE(r.storage(), t.storage());
  EXPECT_EQ(r.to_vector(), (std::vector<double>{1, 4, 2, 5, 3, 6}));
  Tensor v = reshape(t, {3, -1});
  EXPECT_EQ(v.storage(), t.storage());
  EXPECT_EQ(v.shape(), (Shape{3, 2}));
}

TEST(Tensor, ToIndicesReadsInt64InRowMajorOrderFromAnyLayout) {
  // 2^53 + 1 has no double: the values are read as int64, never through a double.
  const int64_t big = (int64_t{1} << 53) + 1;
  Tensor t = from_indices({0, 1, 2, big, -4, 5}, {2, 3});
  EXPECT_EQ(to_indices(t), (std::vector<int64_t>{0, 1, 2, big, -4, 5}));
  EXPECT_EQ(to_indices(transpose(t, 0, 1)), (std::vector<int64_t>{0, big, 1, -4, 2, 5}));
  EXPECT_EQ(to_indices(from_indices(to_indices(t), {6})), to_indices(t));
  EXPECT_THROW(to_indices(from_vector({1, 2}, {2})), Error);
}

TEST(Tensor, BroadcastingAddsAlongStrideZero) {
  Tensor a = from_vector({1, 2, 3}, {3, 1}, DType::F32);
  Tensor b = from_vector({10, 20}, {2}, DType::F32);
  Tensor c = add(a, b);
  EXPECT_EQ(c.shape(), (Shape{3, 2}));
  EXPECT_EQ(c.to_vector(), (std::vector<double>{11, 21, 12, 22, 13, 23}));
}

TEST(Allocator, CountsCurrentAndPeakBytes) {
  Allocator& cpu = allocator_for(Device::CPU);
  int64_t before = cpu.stats().current_bytes;
  cpu.reset_peak();
  {
    Tensor t = empty({1000}, DType::F64);
    EXPECT_EQ(cpu.stats().current_bytes, before + 8000);
    Tensor u = empty({500}, DType::F32);
    EXPECT_EQ(cpu.stats().peak_bytes, before + 10000);
  }
  EXPECT_EQ(cpu.stats().current_bytes, before);
  EXPECT_EQ(cpu.stats().peak_bytes, before + 10000);
  cpu.reset_peak();
  EXPECT_EQ(cpu.stats().peak_bytes, before);
}

TEST(Allocator, CudaWithoutBackendIsAClearError) {
  if (built_with_cuda()) GTEST_SKIP() << "this build has the CUDA backend";
  try {
    empty({2}, DType::F32, Device::CUDA);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no CUDA backend"), std::string::npos) << e.what();
  }
}

TEST(Generator, SameSeedSameStreamDifferentSeedDifferentStream) {
  Generator a(42), b(42), c(43);
  for (int i = 0; i < 100; ++i) {
    uint64_t x = a.next_u64();
    EXPECT_EQ(x, b.next_u64());
    (void)c;
  }
  Generator d(42), e(43);
  int same = 0;
  for (int i = 0; i < 100; ++i) same += d.next_u64() == e.next_u64();
  EXPECT_LT(same, 2);
}

TEST(Generator, StateRoundTripContinuesTheStream) {
  Generator a(5);
  a.next_u64();
  std::array<uint64_t, 4> saved = a.state();
  uint64_t expected = a.next_u64();
  Generator b(999);
  b.set_state(saved);
  EXPECT_EQ(b.next_u64(), expected);
}

TEST(Generator, UniformNormalAndBernoulliHaveTheRightMoments) {
  Generator g(7);
  const int n = 200000;
  double su = 0, sn = 0, sn2 = 0, sb = 0;
  for (int i = 0; i < n; ++i) {
    double u = g.uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    su += u;
    double z = g.normal();
    sn += z;
    sn2 += z * z;
    sb += g.bernoulli(0.3);
  }
  EXPECT_NEAR(su / n, 0.5, 0.005);
  EXPECT_NEAR(sn / n, 0.0, 0.01);
  EXPECT_NEAR(sn2 / n, 1.0, 0.01);
  EXPECT_NEAR(sb / n, 0.3, 0.005);
}

// empty_in_layout_of: a dense permuted tensor's axis order is kept (a
// split-heads view in token-major order stays token-major), size-1 axes
// included; a tensor with gaps or a broadcast axis gives a contiguous one.
TEST(Tensor, EmptyInLayoutOfKeepsADensePermutedOrderOnly) {
  const Tensor heads = permute(empty({4, 5, 2, 3}), {0, 2, 1, 3});  // [4, 2, 5, 3], token-major
  const Tensor same = empty_in_layout_of(heads, DType::F64, Device::CPU);
  EXPECT_EQ(same.shape(), heads.shape());
  EXPECT_EQ(same.strides(), heads.strides());
  EXPECT_EQ(same.dtype(), DType::F64);
  EXPECT_EQ(same.storage()->bytes(), static_cast<size_t>(heads.numel()) * 8) << "one dense block";
  const Tensor with_one = transpose(empty({3, 1, 4}), 0, 2);  // [4, 1, 3]
  EXPECT_EQ(empty_in_layout_of(with_one, DType::F32, Device::CPU).strides(), (std::vector<int64_t>{1, 12, 4}));
  const Tensor contiguous = empty({2, 3});
  EXPECT_EQ(empty_in_layout_of(contiguous, DType::F32, Device::CPU).strides(), contiguous.strides());
  const Tensor gaps = narrow(empty({4, 6}), 1, 0, 3);  // rows 6 apart, 3 used
  EXPECT_EQ(empty_in_layout_of(gaps, DType::F32, Device::CPU).strides(), (std::vector<int64_t>{3, 1}));
  const Tensor broadcast = expand(empty({1, 3}), {4, 3});
  EXPECT_EQ(empty_in_layout_of(broadcast, DType::F32, Device::CPU).strides(), (std::vector<int64_t>{3, 1}));
}

}  // namespace
}  // namespace attn
