// The gradient sum on the tensors' device (PackedGradientSync, which NCCL's
// sum uses) without NCCL: a fake all-reduce plays the other process, so the
// packing, the flags, the sparse embedding rows and the unpacking are checked
// on the CPU, and on CUDA tensors where a GPU (or the emulated one) is
// visible. The NCCL calls themselves run in scripts/gpu_check.sh.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "attn/engine/copy.h"
#include "attn/engine/cuda/cuda_backend.h"
#include "attn/engine/error.h"
#include "attn/train/distributed/packed_gradient_sync.h"
#include "attn/train/distributed/summed_gradient_sync.h"

namespace attn {
namespace {

// An all-reduce of two processes seen from one: it records what this process
// sent and adds what the other sent (`others`, one vector per buffer), in the
// buffer's dtype, as NCCL adds.
class FakeSum final : public BufferSum {
 public:
  void sum(const std::vector<Tensor>& buffers, const char*) override {
    sent.clear();
    types.clear();
    for (size_t b = 0; b < buffers.size(); ++b) {
      const Tensor& buffer = buffers[b];
      if (buffer.dim() != 1 || !buffer.is_contiguous()) throw Error("FakeSum: a buffer is not a contiguous vector");
      std::vector<double> values = buffer.to(Device::CPU).to_vector();
      sent.push_back(values);
      types.push_back(buffer.dtype());
      if (others.empty()) continue;
      if (others[b].size() != values.size()) throw Error("FakeSum: the other process packed a different length");
      for (size_t i = 0; i < values.size(); ++i)
        values[i] = buffer.dtype() == DType::F32
                        ? static_cast<double>(static_cast<float>(values[i]) + static_cast<float>(others[b][i]))
                        : values[i] + others[b][i];
      copy_into(buffer, from_vector(values, buffer.shape(), buffer.dtype()).to(buffer.device()));
    }
  }
  int processes() const override { return 2; }
  std::string describe() const override { return "fake"; }

  std::vector<std::vector<double>> others, sent;
  std::vector<DType> types;
};

// The same for SummedGradientSync's communicator: float64 sums, float32
// values added in float64 and rounded once.
class FakeProcesses final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 2; }
  void sum_in_rank_order(std::vector<double>& values, const char*) override {
    sent.push_back(values);
    if (!others.empty())
      for (size_t i = 0; i < values.size(); ++i) values[i] += others[0][i];
  }
  void sum_in_rank_order(std::vector<float>& values, const char*) override {
    sent_narrow.push_back(values);
    if (!others.empty())
      for (size_t i = 0; i < values.size(); ++i)
        values[i] = static_cast<float>(static_cast<double>(values[i]) + static_cast<double>(others_narrow[0][i]));
  }
  std::vector<uint64_t> gather_to_all(uint64_t value, const char*) override { return {value, value}; }
  void broadcast(void*, size_t, int, const char*) override {}
  [[noreturn]] void abort_all(const std::string& message) override { throw Error(message); }
  std::string describe() const override { return "fake"; }

  std::vector<std::vector<double>> others, sent;
  std::vector<std::vector<float>> others_narrow, sent_narrow;
};

// One process's parameters: a float32 matrix, a float32 bias that only
// process 1 reaches, a float64 matrix, a float32 vector no process reaches and
// an embedding table whose gradient is zero outside rows 1 and 4.
struct Process {
  std::vector<Tensor> params;
  double loss = 0;
};

const std::vector<int64_t> kRows{1, 4};

Tensor values_from(double seed, const Shape& shape, DType dtype, Device device) {
  std::vector<double> v(static_cast<size_t>(numel_of(shape)));
  // Multiples of 1/64 of moderate size: float32 sums of two are exact in
  // float64 too, so the two sync paths must agree bitwise.
  for (size_t i = 0; i < v.size(); ++i) v[i] = (seed + static_cast<double>(i) * 0.75 - 3) / 64.0;
  return from_vector(v, shape, dtype).to(device);
}

Process make_process(int rank, Device device) {
  Process p;
  const double s = rank == 0 ? 1.0 : -2.5;
  Tensor w = values_from(0, {3, 4}, DType::F32, device), b = zeros({4}, DType::F32, device),
         d = values_from(1, {2, 3}, DType::F64, device), never = zeros({5}, DType::F32, device),
         table = zeros({6, 2}, DType::F32, device);
  w.set_grad(values_from(s, {3, 4}, DType::F32, device));
  if (rank == 1) b.set_grad(values_from(s + 7, {4}, DType::F32, device));
  d.set_grad(values_from(s * 3, {2, 3}, DType::F64, device));
  std::vector<double> rows(12, 0.0);
  for (int64_t r : kRows)
    for (int64_t c = 0; c < 2; ++c) rows[static_cast<size_t>(r * 2 + c)] = (s + static_cast<double>(r + c)) / 8;
  table.set_grad(from_vector(rows, {6, 2}, DType::F32).to(device));
  p.params = {w, b, d, never, table};
  p.loss = rank == 0 ? 0.625 : 0.25;
  return p;
}

// Process 0's gradients and loss after a two-process sum through `sync`, the
// other process having packed through `other` (which learns what it sent).
template <class Sync, class Fake>
double run_two(Sync& sync0, Fake& fake0, Sync& sync1, Fake& fake1, Process& p0, Process& p1) {
  sync1.set_sparse_rows(p1.params[4], kRows);
  sync1.synchronise(p1.params, p1.loss);  // no `others`: it keeps its own values
  fake0.others = fake1.sent;
  sync0.set_sparse_rows(p0.params[4], kRows);
  return sync0.synchronise(p0.params, p0.loss);
}

// The device by name ("cpu", "cuda"), so the test's log names it.
class PackedGradientSyncOn : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (device() == Device::CUDA && !cuda_available()) GTEST_SKIP() << "no CUDA GPU visible: CUDA tests skipped";
  }
  Device device() const { return GetParam() == "cuda" ? Device::CUDA : Device::CPU; }
};

TEST_P(PackedGradientSyncOn, TwoProcessesGiveTheSumsAndSendOnlyTheRows) {
  const Device device = this->device();
  // Device memory is filled with NaN bytes: a value the packing forgot to write shows.
  const CudaSentinelScope sentinel(device == Device::CUDA);
  Process p0 = make_process(0, device), p1 = make_process(1, device);
  const Process q0 = make_process(0, Device::CPU), q1 = make_process(1, Device::CPU);
  auto fake0 = std::make_unique<FakeSum>(), fake1 = std::make_unique<FakeSum>();
  FakeSum &f0 = *fake0, &f1 = *fake1;
  PackedGradientSync sync0(std::move(fake0)), sync1(std::move(fake1));
  const double loss = run_two(sync0, f0, sync1, f1, p0, p1);
  EXPECT_EQ(loss, 0.875);

  // What went over the wire: [loss, 5 flags, the 6 float64 values], then the
  // 12 + 4 + 5 float32 values and the table's 2 rows of 2.
  ASSERT_EQ(f0.sent.size(), 2u);
  EXPECT_EQ(f0.types[0], DType::F64);
  EXPECT_EQ(f0.types[1], DType::F32);
  EXPECT_EQ(f0.sent[0].size(), 12u);
  EXPECT_EQ(f0.sent[1].size(), 25u);
  EXPECT_EQ(std::vector<double>(f0.sent[0].begin(), f0.sent[0].begin() + 6),
            (std::vector<double>{0.625, 1, 0, 1, 0, 1}));
  EXPECT_EQ(sync0.bytes_sent_last_step(), bytes_sent_to_sum(12, 2, 8) + bytes_sent_to_sum(25, 2, 4));
  EXPECT_EQ(sync0.dense_bytes_last_step(), bytes_sent_to_sum(12, 2, 8) + bytes_sent_to_sum(33, 2, 4));

  for (size_t i : {size_t(0), size_t(2), size_t(4)}) {
    ASSERT_TRUE(p0.params[i].grad().defined()) << "parameter " << i;
    EXPECT_EQ(p0.params[i].grad().device(), device);
    const std::vector<double> got = p0.params[i].grad().to(Device::CPU).to_vector();
    const std::vector<double> a = q0.params[i].grad().to_vector(), b = q1.params[i].grad().to_vector();
    for (size_t k = 0; k < got.size(); ++k) {
      const double want = q0.params[i].dtype() == DType::F32
                              ? static_cast<double>(static_cast<float>(a[k]) + static_cast<float>(b[k]))
                              : a[k] + b[k];
      EXPECT_EQ(got[k], want) << "parameter " << i << " element " << k;
    }
  }
  // Only process 1 reached the bias: the sum is its gradient.
  ASSERT_TRUE(p0.params[1].grad().defined());
  EXPECT_EQ(p0.params[1].grad().to(Device::CPU).to_vector(), q1.params[1].grad().to_vector());
  // No process reached it: it keeps no gradient.
  EXPECT_FALSE(p0.params[3].grad().defined());
  // The table's rows outside the list are zero.
  const std::vector<double> table = p0.params[4].grad().to(Device::CPU).to_vector();
  for (int64_t r : {0, 2, 3, 5})
    for (int64_t c = 0; c < 2; ++c) EXPECT_EQ(table[static_cast<size_t>(r * 2 + c)], 0.0) << "row " << r;
}

TEST_P(PackedGradientSyncOn, AgreesBitwiseWithTheMpiPathForTwoProcesses) {
  const Device device = this->device();
  const CudaSentinelScope sentinel(device == Device::CUDA);
  Process p0 = make_process(0, device), p1 = make_process(1, device);
  auto fake0 = std::make_unique<FakeSum>(), fake1 = std::make_unique<FakeSum>();
  FakeSum &f0 = *fake0, &f1 = *fake1;
  PackedGradientSync sync0(std::move(fake0)), sync1(std::move(fake1));
  const double packed_loss = run_two(sync0, f0, sync1, f1, p0, p1);

  Process m0 = make_process(0, device), m1 = make_process(1, device);
  FakeProcesses c0, c1;
  SummedGradientSync s0(c0), s1(c1);
  s1.set_sparse_rows(m1.params[4], kRows);
  s1.synchronise(m1.params, m1.loss);
  c0.others = c1.sent;
  c0.others_narrow = c1.sent_narrow;
  s0.set_sparse_rows(m0.params[4], kRows);
  const double mpi_loss = s0.synchronise(m0.params, m0.loss);

  EXPECT_EQ(packed_loss, mpi_loss);
  EXPECT_EQ(sync0.bytes_sent_last_step(), s0.bytes_sent_last_step());
  EXPECT_EQ(sync0.dense_bytes_last_step(), s0.dense_bytes_last_step());
  for (size_t i = 0; i < p0.params.size(); ++i) {
    ASSERT_EQ(p0.params[i].grad().defined(), m0.params[i].grad().defined()) << "parameter " << i;
    if (!p0.params[i].grad().defined()) continue;
    EXPECT_EQ(p0.params[i].grad().to(Device::CPU).to_vector(), m0.params[i].grad().to(Device::CPU).to_vector())
        << "parameter " << i;
  }
}

TEST_P(PackedGradientSyncOn, EmptySparseRowsGiveAZeroGradientAndSendNothingOfTheTable) {
  const Device device = this->device();
  const CudaSentinelScope sentinel(device == Device::CUDA);
  Tensor table = zeros({6, 2}, DType::F32, device), w = zeros({3}, DType::F32, device);
  table.set_grad(zeros({6, 2}, DType::F32, device));
  w.set_grad(values_from(2, {3}, DType::F32, device));
  auto fake = std::make_unique<FakeSum>();
  FakeSum& f = *fake;
  PackedGradientSync sync(std::move(fake));
  sync.set_sparse_rows(table, {});
  EXPECT_EQ(sync.synchronise({table, w}, 1.5), 1.5);
  ASSERT_EQ(f.sent.size(), 2u);
  EXPECT_EQ(f.sent[0].size(), 3u);  // the loss and two flags
  EXPECT_EQ(f.sent[1].size(), 3u);  // w only
  ASSERT_TRUE(table.grad().defined());
  EXPECT_EQ(table.grad().to(Device::CPU).to_vector(), std::vector<double>(12, 0.0));
  EXPECT_EQ(w.grad().to(Device::CPU).to_vector(), values_from(2, {3}, DType::F32, Device::CPU).to_vector());
}

TEST_P(PackedGradientSyncOn, OnlyFloat64ParametersSendOneBuffer) {
  const Device device = this->device();
  Tensor d = zeros({2}, DType::F64, device);
  d.set_grad(values_from(0, {2}, DType::F64, device));
  auto fake = std::make_unique<FakeSum>();
  FakeSum& f = *fake;
  PackedGradientSync sync(std::move(fake));
  sync.synchronise({d}, 0.5);
  ASSERT_EQ(f.sent.size(), 1u);
  EXPECT_EQ(f.sent[0], (std::vector<double>{0.5, 1, -3 / 64.0, -2.25 / 64.0}));
}

INSTANTIATE_TEST_SUITE_P(Devices, PackedGradientSyncOn, ::testing::Values("cpu", "cuda"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return std::string(info.param == "cpu" ? "Cpu" : "Cuda");
                         });

TEST(PackedGradientSync, ParametersOnTwoDevicesOrOfADataDtypeAreRefused) {
  Tensor ids = zeros({2}, DType::I64);
  PackedGradientSync sync(std::make_unique<FakeSum>());
  try {
    sync.synchronise({ids}, 0);
    FAIL() << "an int64 parameter was summed";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("float32 or float64"), std::string::npos) << e.what();
  }
  if (!cuda_available()) return;  // the second half needs a CUDA tensor
  try {
    sync.synchronise({zeros({2}), zeros({2}, DType::F32, Device::CUDA)}, 0);
    FAIL() << "parameters on two devices were summed";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("one device"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace attn
