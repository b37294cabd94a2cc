// Every op of the registry on the GPU against the CPU: each sample case runs
// with its inputs moved to CUDA (same shapes, strides and offsets, so the
// broadcast and transposed cases stay non-contiguous there), in float64 and
// in float32, and its output and input gradients are compared with the CPU
// float64 result. The allocator's sentinel fill is on, so an output element a
// kernel never writes reads as NaN and fails. Skips without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

#include "attn/engine/autograd.h"
#include "attn/engine/cuda/cuda_backend.h"
#include "attn/engine/random.h"
#include "attn/engine/copy.h"
#include "attn/ops/registry.h"
#include "attn/ops/layer_norm/layer_norm.h"
#include "attn/ops/loss/loss.h"
#include "attn/ops/matmul/matmul.h"
#include "attn/ops/dropout/dropout.h"
#include "attn/ops/dropout/dropout_example_keys.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/ops/softmax/softmax.h"
#include "attn/ops/view/view.h"

namespace attn {
namespace {

// |got - ref| <= atol + rtol * |ref|.
// float64: the GPU computes the same formulas in a different order (tree
//   reductions, fused multiply-adds, libdevice's exp/log, 1-2 ulp), so
//   results differ by a few ulp times the reduction length: 1e-9 absolute and
//   1e-7 relative is ~1e8 times that and still catches any wrong element.
// float32: inputs are rounded to float32 (2^-24 ~ 6e-8 relative) and every
//   op rounds its result; chains of a few ops over tens of elements, some
//   amplifying relative error (log near small values, differences of
//   similar numbers), stay well below 1e-3 relative; 1e-4 absolute covers
//   results that cancel to near zero.
struct Tol {
  double atol, rtol;
};
constexpr Tol kTolF64{1e-9, 1e-7};
constexpr Tol kTolF32{1e-4, 1e-3};

struct CaseRun {
  std::vector<double> out;
  std::vector<std::vector<double>> grads;  // per input; empty when none reached it
  std::vector<bool> has_grad;
};

// x's values in `dtype` on `device`, with x's shape, strides and offset (the
// whole storage is moved), as a fresh leaf that requires grad when x does.
Tensor place(const Tensor& x, DType dtype, Device device) {
  NoGrad no_grad;
  const int64_t n = static_cast<int64_t>(x.storage()->bytes() / dtype_size(x.dtype()));
  Tensor flat = make_view(x, {n}, {1}, 0);
  if (is_floating(x.dtype())) flat = cast(flat, dtype);
  flat = flat.to(device);
  Tensor v = make_view(flat, x.shape(), x.strides(), x.offset());
  if (x.requires_grad()) v.set_requires_grad(true);
  return v;
}

CaseRun run_case(const OpCase& c, DType dtype, Device device, const Tensor& seed) {
  std::vector<Tensor> in;
  for (const Tensor& x : c.inputs) in.push_back(place(x, is_floating(x.dtype()) ? dtype : x.dtype(), device));
  Tensor y = c.fn(in);
  CaseRun r;
  r.out = y.to_vector();
  r.grads.resize(in.size());
  r.has_grad.assign(in.size(), false);
  if (y.requires_grad() && seed.defined()) {
    y.backward(place(seed, y.dtype(), device));
    for (size_t i = 0; i < in.size(); ++i) {
      if (!in[i].requires_grad() || !in[i].grad().defined()) continue;
      r.has_grad[i] = true;
      r.grads[i] = in[i].grad().to_vector();
    }
  }
  return r;
}

// Empty when every element agrees, else the first disagreements.
std::string compare(const std::vector<double>& got, const std::vector<double>& ref, Tol tol, const std::string& what) {
  if (got.size() != ref.size())
    return what + ": " + std::to_string(got.size()) + " elements, expected " + std::to_string(ref.size()) + "\n";
  std::ostringstream os;
  int shown = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double g = got[i], e = ref[i];
    bool ok;
    if (std::isnan(e)) ok = std::isnan(g);
    else if (std::isinf(e)) ok = g == e;
    else ok = std::isfinite(g) && std::abs(g - e) <= tol.atol + tol.rtol * std::abs(e);
    if (!ok && shown++ < 5) os << what << "[" << i << "]: got " << g << ", expected " << e << "\n";
  }
  if (shown > 5) os << what << ": " << shown << " elements differ in all\n";
  return os.str();
}

// Output and every input gradient of a CUDA run against the CPU reference.
std::string compare_runs(const CaseRun& got, const CaseRun& ref, Tol tol, const std::string& where) {
  std::string failures = compare(got.out, ref.out, tol, where + " output");
  for (size_t i = 0; i < ref.grads.size(); ++i) {
    if (ref.has_grad[i] != got.has_grad[i]) {
      failures += where + ": input " + std::to_string(i) +
                  (ref.has_grad[i] ? " got no gradient on cuda\n" : " got a gradient only on cuda\n");
      continue;
    }
    if (ref.has_grad[i])
      failures += compare(got.grads[i], ref.grads[i], tol, where + " grad of input " + std::to_string(i));
  }
  return failures;
}

std::vector<std::string> registered_names() {
  std::vector<std::string> names;
  for (const OpSpec& s : op_registry().all()) names.push_back(s.name);
  return names;
}

class CudaMatchesCpu : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (!cuda_available()) GTEST_SKIP() << "no CUDA GPU visible: CUDA tests skipped";
  }
  const OpSpec& spec() const { return *op_registry().find(GetParam()); }
};

// Random ops draw their masks from different generators on the two devices,
// so they are checked for what they are: y = D x and dx = D dy with one
// diagonal D whose entries are 0 or a single scale > 1, both present.
std::string check_random_op(const OpCase& c, const CaseRun& r, const Tensor& seed, const std::string& where) {
  std::vector<double> x = c.inputs[0].to_vector(), g = seed.to_vector();
  std::ostringstream os;
  double scale = 0;
  bool dropped = false;
  for (size_t i = 0; i < x.size(); ++i) {
    const double d = r.out[i] / x[i];
    if (r.out[i] == 0) {
      dropped = true;
      if (r.grads[0][i] != 0) os << where << ": gradient " << i << " of a dropped element is " << r.grads[0][i] << "\n";
      continue;
    }
    if (scale == 0) scale = d;
    if (std::abs(d - scale) > 1e-5 * scale) os << where << ": element " << i << " scaled by " << d << ", not " << scale << "\n";
    if (std::abs(r.grads[0][i] - scale * g[i]) > 1e-5 * (1 + std::abs(g[i])))
      os << where << ": gradient " << i << " is " << r.grads[0][i] << ", expected " << scale * g[i] << "\n";
  }
  if (!dropped || scale <= 1) os << where << ": expected both dropped and kept (scaled up) elements\n";
  return os.str();
}

// The case's output on its own (CPU, float64) inputs, without the tape.
Tensor reference_output(const OpCase& c) {
  NoGrad no_grad;
  std::vector<Tensor> in;
  for (const Tensor& x : c.inputs) in.push_back(x.detach());
  return c.fn(in);
}

TEST_P(CudaMatchesCpu, ForwardAndInputGradients) {
  const OpSpec& s = spec();
  CudaSentinelScope sentinel;
  int checked = 0;
  for (const OpCase& c : s.cases()) {
    // The reference: float64 on the CPU, with a fixed random output gradient.
    const Tensor y_ref = reference_output(c);
    Generator gen(17);
    Tensor seed = is_floating(y_ref.dtype()) ? rand_uniform(y_ref.shape(), -1, 1, gen, DType::F64) : Tensor();
    const CaseRun ref = run_case(c, DType::F64, Device::CPU, seed);
    for (DType dt : {DType::F64, DType::F32}) {
      const std::string where = s.name + " / " + c.label + " / " + dtype_name(dt);
      const CaseRun got = run_case(c, dt, Device::CUDA, seed);
      ++checked;
      if (s.family == "dropout") {
        EXPECT_EQ(check_random_op(c, got, seed, where), "");
        const CaseRun again = run_case(c, dt, Device::CUDA, seed);
        EXPECT_EQ(again.out, got.out) << where << ": the same seed drew a different mask";
        continue;
      }
      EXPECT_EQ(compare_runs(got, ref, dt == DType::F64 ? kTolF64 : kTolF32, where), "");
    }
  }
  EXPECT_GT(checked, 0) << s.name << " has no case";
}

// The registry's small cases never reach four launch shapes: rows longer than
// 1024 (one block per row, block-wide reductions through shared memory),
// a few rows so long that each is cut into slices of a block each (sum and
// max: a second kernel combines the slices), column sums over more than
// 128 rows (split into chunks whose partial sums a second kernel adds) and a
// few products with long sums (one GEMM call each, ops/matmul/matmul_cuda.cu).
// These cases do, forward and input gradients.
std::vector<OpCase> launch_shape_cases() {
  Generator g(5);
  const int64_t n = 1500;
  Tensor x = rand_uniform({3, n}, -2, 2, g, DType::F64).set_requires_grad(true);
  std::vector<double> keep(static_cast<size_t>(3 * n));
  for (size_t i = 0; i < keep.size(); ++i) keep[i] = i % 3 != 0;
  Tensor mask = from_vector(keep, {3, n}, DType::U8);
  Tensor gamma = rand_uniform({n}, 0.5, 1.5, g, DType::F64).set_requires_grad(true);
  Tensor beta = rand_uniform({n}, -1, 1, g, DType::F64).set_requires_grad(true);
  Tensor target = from_indices({3, n - 1, 700}, {3});
  Tensor tall = rand_uniform({300, 7}, -2, 2, g, DType::F64).set_requires_grad(true);
  Tensor tall_gamma = rand_uniform({7}, 0.5, 1.5, g, DType::F64).set_requires_grad(true);
  Tensor tall_beta = rand_uniform({7}, -1, 1, g, DType::F64).set_requires_grad(true);
  // 40000 elements a row: 9 slices of 4445 (ops/reduce/reduce_cuda.cu, slices_per_row).
  Tensor wide = rand_uniform({2, 40000}, -2, 2, g, DType::F64).set_requires_grad(true);
  // Two [12, 2500] x [2500, 10] products, the first operand a transposed view
  // (MTSA's weight gradients are x^T g with x head-strided). Positive
  // operands: no cancellation, so a float32 sum of 2500 terms is within
  // 2500 u ~ 1.5e-4 of its value relative (Higham's bound), under kTolF32.
  Tensor long_a = rand_uniform({2, 2500, 12}, 0.5, 1.5, g, DType::F64).set_requires_grad(true);
  Tensor long_b = rand_uniform({2, 2500, 10}, 0.5, 1.5, g, DType::F64).set_requires_grad(true);
  using V = const std::vector<Tensor>&;
  return {
      {"softmax, long rows", {x}, [](V v) { return softmax(v[0], 1); }},
      {"log_softmax masked, long rows", {x, mask}, [](V v) { return log_softmax(v[0], 1, v[1]); }},
      {"layer_norm, long rows", {x, gamma, beta}, [](V v) { return layer_norm(v[0], v[1], v[2]); }},
      {"sum, long rows", {x}, [](V v) { return sum(v[0], {1}); }},
      {"max, long rows", {x}, [](V v) { return max(v[0], {1}); }},
      {"cross_entropy, long rows", {x, target}, [](V v) { return cross_entropy(v[0], v[1]); }},
      {"sum, two rows cut into slices", {wide}, [](V v) { return sum(v[0], {1}); }},
      {"max, two rows cut into slices", {wide}, [](V v) { return max(v[0], {1}); }},
      {"sum of a whole tensor, cut into slices", {wide}, [](V v) { return sum(v[0]); }},
      {"matmul, two products with long sums", {long_a, long_b},
       [](V v) { return matmul(transpose(v[0], 1, 2), v[1]); }},
      {"sum over 300 rows", {tall}, [](V v) { return sum(v[0], {0}); }},
      {"layer_norm parameter gradients over 300 rows", {tall, tall_gamma, tall_beta},
       [](V v) { return layer_norm(v[0], v[1], v[2]); }},
  };
}

// squared_norm's rows of 2^16 (more than kWarpRowLimit: a block each, cut
// into slices when few) and its tail, in float64 on both devices.
TEST(CudaLaunchShapes, SquaredNormMatchesTheCpu) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA GPU visible: CUDA tests skipped";
  CudaSentinelScope sentinel;
  Generator g(23);
  for (DType dt : {DType::F64, DType::F32}) {
    Tensor x = rand_uniform({3 * 65536 + 11}, -2, 2, g, dt);
    const double cpu = squared_norm(x).item(), gpu = squared_norm(x.to(Device::CUDA)).item();
    // Both sum the same double squares in different orders: each within n u_64 of the exact sum.
    EXPECT_NEAR(gpu, cpu, 2.0 * static_cast<double>(x.numel()) * std::ldexp(1.0, -53) * cpu) << dtype_name(dt);
    EXPECT_GT(cpu, 0.0);
  }
}

TEST(CudaLaunchShapes, BlockPerRowAndChunkedColumnKernelsMatchTheCpu) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA GPU visible: CUDA tests skipped";
  CudaSentinelScope sentinel;
  for (const OpCase& c : launch_shape_cases()) {
    const Tensor y_ref = reference_output(c);
    Generator gen(17);
    Tensor seed = rand_uniform(y_ref.shape(), -1, 1, gen, DType::F64);
    const CaseRun ref = run_case(c, DType::F64, Device::CPU, seed);
    for (DType dt : {DType::F64, DType::F32}) {
      const std::string where = c.label + " / " + dtype_name(dt);
      const CaseRun got = run_case(c, dt, Device::CUDA, seed);
      EXPECT_EQ(compare_runs(got, ref, dt == DType::F64 ? kTolF64 : kTolF32, where), "");
      EXPECT_TRUE(std::any_of(got.has_grad.begin(), got.has_grad.end(), [](bool b) { return b; })) << where;
    }
  }
}

// Max over rows cut into slices keeps the CPU's rules across slice borders:
// the first of equal maxima (here in different slices), a NaN in a row's
// first element wins, a NaN elsewhere never does.
TEST(CudaLaunchShapes, SlicedMaxKeepsTheFirstMaximumAndTheNanRules) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA GPU visible: CUDA tests skipped";
  CudaSentinelScope sentinel;
  const int64_t n = 40000;  // 9 slices of 4445
  const double nan = std::nan("");
  for (DType dt : {DType::F64, DType::F32}) {
    Generator g(8);
    std::vector<double> v = rand_uniform({2, n}, -1, 1, g, DType::F64).to_vector();
    v[100] = 5;          // row 0: equal maxima in the first and the ninth slice,
    v[39000] = 5;        // the first wins
    v[30000] = nan;      // and a NaN inside the row never does
    v[n] = nan;          // row 1: a NaN first element wins over the 5 after it
    v[n + 20000] = 5;
    const Tensor x = from_vector(v, {2, n}, dt);
    const std::vector<int64_t> at = to_indices(argmax(x.to(Device::CUDA), 1));
    const std::vector<double> m = max(x.to(Device::CUDA), {1}).to(Device::CPU).to_vector();
    const std::string where = dtype_name(dt);
    EXPECT_EQ(at, to_indices(argmax(x, 1))) << where;
    EXPECT_EQ(at, (std::vector<int64_t>{100, 0})) << where;
    EXPECT_EQ(m[0], 5) << where;
    EXPECT_TRUE(std::isnan(m[1])) << where;
  }
}

// One seed, one mask on every device: both kernels draw from the stream of
// ops/dropout_stream.h. The keep decisions are integer comparisons, so they
// must agree everywhere; the kept values are one scaling each (compared to
// the float tolerance).
TEST(CudaDropout, DropsExactlyTheElementsTheCpuDrops) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA GPU visible: CUDA tests skipped";
  CudaSentinelScope sentinel;
  Generator data(3);
  const Tensor x = rand_uniform({3, 23457}, 0.5, 1.5, data);  // several CPU chunks, never 0
  for (double p : {0.1, 0.5}) {
    Generator on_cpu(21), on_cuda(21);
    const std::vector<double> cpu = dropout(x, p, on_cpu).to_vector();
    const std::vector<double> gpu = dropout(x.to(Device::CUDA), p, on_cuda).to(Device::CPU).to_vector();
    ASSERT_EQ(cpu.size(), gpu.size());
    int64_t differ = 0;
    for (size_t i = 0; i < cpu.size(); ++i) {
      differ += (cpu[i] == 0) != (gpu[i] == 0);
      if (cpu[i] != 0 && gpu[i] != 0) {
        EXPECT_NEAR(gpu[i], cpu[i], 1e-6 * cpu[i]) << i;
      }
    }
    EXPECT_EQ(differ, 0) << "p = " << p;
  }
}

// Example-keyed noise (one stream per row, ops/dropout/dropout_example_keys.h):
// the CUDA kernels draw each row's stream as the CPU kernels do.
TEST(CudaDropout, KeyedRowsDropAndSampleAsOnTheCpu) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA GPU visible: CUDA tests skipped";
  CudaSentinelScope sentinel;
  Generator data(4);
  const Tensor x = rand_uniform({3, 20001}, 0.5, 1.5, data);  // rows longer than a CPU chunk
  const Tensor probs = rand_uniform({3, 20001}, 0.0, 1.0, data);
  ExampleNoiseKeys keys({4, 9, 2});
  Generator on_cpu(17), on_cuda(17);
  const std::vector<double> cpu = dropout(x, 0.3, on_cpu).to_vector();
  const std::vector<double> gpu = dropout(x.to(Device::CUDA), 0.3, on_cuda).to(Device::CPU).to_vector();
  int64_t differ = 0;
  for (size_t i = 0; i < cpu.size(); ++i) differ += (cpu[i] == 0) != (gpu[i] == 0);
  EXPECT_EQ(differ, 0);
  EXPECT_EQ(bernoulli(probs, on_cpu).to_vector(),
            bernoulli(probs.to(Device::CUDA), on_cuda).to(Device::CPU).to_vector());
}

INSTANTIATE_TEST_SUITE_P(CudaRegistry, CudaMatchesCpu, ::testing::ValuesIn(registered_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace attn
