// Anomaly detection (engine/anomaly.h): while an AnomalyDetector is alive,
// the first kernel that writes a NaN, or an infinity made from finite values,
// throws an AnomalyError naming the kernel, its arguments' shapes and, in a
// backward pass, the forward op. Deliberate -inf masking and NaN that a select
// drops are not reported; nothing is checked without a detector.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>

#include "attn/engine/anomaly.h"
#include "attn/engine/autograd.h"
#include "attn/nn/safetensors.h"
#include "attn/ops/binary/binary.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/ops/unary/unary.h"
#include "test_util.h"
#include "attn/train/cli/model_commands.h"

namespace attn {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string anomaly_of(const std::function<void()>& f) { return testing_support::error_of<AnomalyError>(f); }

TEST(AnomalyDetection, NothingIsCheckedWithoutADetector) {
  EXPECT_EQ(kernel_observer(), nullptr);  // the default: the kernel path does one load and no checks
  Tensor y = sqrt(from_vector({-1.0, 4.0}, {2}));
  EXPECT_TRUE(std::isnan(y.to_vector()[0]));
}

TEST(AnomalyDetection, ForwardNanNamesTheKernelAndShapes) {
  AnomalyDetector detector;
  Tensor x = from_vector({1.0, -1.0, 4.0, 9.0, 1.0, 2.0}, {2, 3});
  const std::string msg = anomaly_of([&] { sqrt(x); });
  EXPECT_THAT(msg, HasSubstr("kernel 'unary' (forward)"));
  EXPECT_THAT(msg, HasSubstr("wrote nan at flat index 1"));
  EXPECT_THAT(msg, HasSubstr("[2, 3] float32"));
}

TEST(AnomalyDetection, OverflowFromFiniteInputsIsReported) {
  AnomalyDetector detector;
  Tensor x = from_vector({1.0, 100.0}, {2});  // exp(100) overflows float32
  EXPECT_THAT(anomaly_of([&] { exp(x); }), HasSubstr("wrote inf at flat index 1"));
  Tensor z = from_vector({0.0}, {1});
  EXPECT_THAT(anomaly_of([&] { log(z); }), HasSubstr("wrote -inf"));
}

TEST(AnomalyDetection, BackwardNamesTheForwardOp) {
  Tensor x = from_vector({0.0, 4.0}, {2}).set_requires_grad();
  Tensor y = sum(sqrt(x));  // finite forward; d sqrt/dx at 0 is inf
  AnomalyDetector detector;
  const std::string msg = anomaly_of([&] { y.backward(); });
  EXPECT_THAT(msg, HasSubstr("in the backward of 'sqrt'"));
  EXPECT_THAT(msg, HasSubstr("wrote inf"));
  EXPECT_THAT(msg, Not(HasSubstr("(forward)")));
}

TEST(AnomalyDetection, DeliberateMinusInfinityMaskingPasses) {
  AnomalyDetector detector;
  const double inf = std::numeric_limits<double>::infinity();
  Tensor x = from_vector({1.0, 2.0, 3.0, 4.0}, {2, 2});
  Tensor blocked = from_vector({0.0, 1.0, 1.0, 1.0}, {2, 2}).to(Device::CPU);
  Tensor mask = ne(blocked, zeros({}, DType::F32));
  Tensor m = max(masked_fill(x, mask, -inf), {1}, true);  // row 1 is all -inf: its max is -inf
  Tensor shift = masked_fill(m, eq(m, full({}, -inf)), 0.0);
  Tensor y = sub(x, shift);
  EXPECT_EQ(y.to_vector(), (std::vector<double>{0.0, 1.0, 3.0, 4.0}));
  EXPECT_GT(detector.kernels_checked(), 4);
}

TEST(AnomalyDetection, NanThatASelectDropsIsNotReported) {
  AnomalyDetector detector;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor x = from_vector({1.0, nan}, {2});  // NaN at a "padded" position
  Tensor keep = from_indices({1, 0}, {2});
  Tensor valid = ne(keep, zeros({}, DType::I64));
  Tensor y = where(valid, x, zeros({}, DType::F32));
  EXPECT_EQ(y.to_vector(), (std::vector<double>{1.0, 0.0}));
  // Using the NaN is reported, and says the argument was already non-finite.
  const std::string msg = anomaly_of([&] { add(x, x); });
  EXPECT_THAT(msg, HasSubstr("kernel 'binary'"));
  EXPECT_THAT(msg, HasSubstr("(non-finite before the call)"));
}

TEST(AnomalyDetection, RemovingTheDetectorRestoresThePreviousObserver) {
  KernelObserver* before = kernel_observer();
  {
    AnomalyDetector detector;
    EXPECT_EQ(kernel_observer(), &detector);
  }
  EXPECT_EQ(kernel_observer(), before);
}

}  // namespace
}  // namespace attn

namespace attn {
namespace {

// `attn forward --detect-anomaly` stops at the first kernel that a NaN in a
// valid input position reaches; without the flag the NaN flows to the output.
TEST(AnomalyDetection, ForwardCommandFlagStopsAtTheFirstNonFiniteKernel) {
  const std::string dir = testing_support::scratch_dir() + "/";
  std::ofstream(dir + "model.cfg") << "encoder = disan\nhidden = 3\n";
  // Finite inputs whose products overflow float32 in the first layer.
  Tensor x = from_vector(std::vector<double>(2 * 4 * 3, 3e38), {2, 4, 3}, DType::F32);
  save_safetensors(dir + "in.safetensors", {{"x", x}, {"lengths", from_indices({4, 2}, {2})}});
  std::vector<std::string> args = {"--model", dir + "model.cfg", "--weights", dir + "w.safetensors", "--input",
                                   dir + "in.safetensors", "--output", dir + "out.safetensors", "--init-weights"};
  // Without the flag: an error that says the outputs are not finite, no file.
  EXPECT_THAT(testing_support::error_of([&] { run_forward_command(args); }),
              HasSubstr("the encoder's outputs are not finite"));
  EXPECT_FALSE(std::ifstream(dir + "out.safetensors").good());
  args.pop_back();
  args.push_back("--detect-anomaly");
  const std::string msg = anomaly_of([&] { run_forward_command(args); });
  EXPECT_THAT(msg, HasSubstr("detect-anomaly: kernel '"));  // the kernel whose output overflowed
  EXPECT_THAT(msg, Not(HasSubstr("(non-finite before the call)")));
  EXPECT_EQ(kernel_observer(), nullptr);
}

}  // namespace
}  // namespace attn
