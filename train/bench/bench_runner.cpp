#include "attn/train/bench/bench_runner.h"

#include <omp.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "attn/engine/allocator.h"
#include "attn/engine/autograd.h"
#include "attn/engine/cuda/cuda_backend.h"
#include "attn/engine/error.h"
#include "attn/engine/random.h"
#include "attn/models/masks.h"
#include "attn/ops/binary/binary.h"
#include "attn/engine/copy.h"
#include "attn/ops/reduce/reduce.h"

namespace attn {

namespace {

// Linear interpolation between order statistics (the usual "type 7" quantile).
double quantile(const std::vector<double>& sorted, double q) {
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos)), hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (pos - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

}  // namespace

TimeSummary summarize_times(std::vector<double> ms) {
  ATTN_CHECK(!ms.empty(), "bench", "no timed repetitions to summarise");
  std::sort(ms.begin(), ms.end());
  TimeSummary s;
  s.min_ms = ms.front();
  s.max_ms = ms.back();
  s.median_ms = quantile(ms, 0.5);
  s.q1_ms = quantile(ms, 0.25);
  s.q3_ms = quantile(ms, 0.75);
  return s;
}

void check_bench_device(Device device) {
  if (device == Device::CPU) return;
  ATTN_CHECK(built_with_cuda(), "bench", "the CUDA backend is not available in this build (rebuild with CUDA, or use "
                                         "--device cpu)");
  require_cuda("bench");  // says so when no GPU is visible
#ifdef ATTN_CUDA_EMULATED
  throw Error("bench: this is the emulated CUDA build, a test harness whose kernels run on the CPU; its timings say "
              "nothing about a GPU (build with nvcc, -DATTN_CUDA=ON)");
#endif
}

std::unique_ptr<Encoder> make_bench_encoder(const BenchPoint& point, Generator& init, Generator& noise) {
  Config config;
  config.set("encoder", point.model);
  if (point.hidden > 0) config.set("hidden", std::to_string(point.hidden));
  for (const auto& [key, value] : point.config) config.set(key, value);
  std::unique_ptr<Encoder> encoder = build_encoder(config, EncoderContext{point.features, point.dtype, &init, &noise});
  config.check_all_used("bench encoder '" + point.model + "'");
  if (point.device != Device::CPU) encoder->to(point.device);
  return encoder;
}

BenchInputs make_bench_inputs(const BenchPoint& point, Generator& gen) {
  BenchInputs in;
  in.x = rand_uniform({point.batch, point.length, point.features}, -1.0, 1.0, gen, point.dtype);
  if (point.random_lengths) {
    std::vector<int64_t> lengths(static_cast<size_t>(point.batch));
    for (int64_t& l : lengths) l = 1 + static_cast<int64_t>(gen.next_u64() % static_cast<uint64_t>(point.length));
    in.mask = length_mask(lengths, point.length);
  } else {
    in.mask = ones({point.batch, point.length}, DType::U8);
  }
  if (point.device != Device::CPU) {
    in.x = to_device(in.x, point.device);
    in.mask = to_device(in.mask, point.device);
  }
  return in;
}

EncoderOutput run_bench_step_with_outputs(Encoder& encoder, const BenchInputs& inputs, BenchMode mode) {
  if (mode == BenchMode::Infer) {
    encoder.set_training(false);
    NoGrad no_grad;
    EncoderOutput out = encoder.encode(inputs.x, inputs.mask);
    ATTN_CHECK(out.tokens.defined() && out.sentence.defined(), "bench", "the encoder returned no output");
    return out;
  }
  encoder.set_training(true);
  for (const Tensor& p : encoder.parameters()) p.zero_grad();
  if (inputs.x.requires_grad()) inputs.x.zero_grad();
  EncoderOutput out = encoder.encode(inputs.x, inputs.mask);
  Tensor loss = add(sum(out.tokens), sum(out.sentence));
  loss.backward();
  return out;
}

void run_bench_step(Encoder& encoder, const BenchInputs& inputs, BenchMode mode) {
  run_bench_step_with_outputs(encoder, inputs, mode);
}

int64_t minor_page_faults() {
  struct rusage usage {};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<int64_t>(usage.ru_minflt);
}

int64_t peak_rss_bytes() {
  struct rusage usage {};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;  // Linux reports KiB
}

BenchResult run_bench_point(const BenchPoint& point) {
  BenchResult result;
  result.point = point;
  Generator init(point.seed), noise(point.seed + 1), data(point.seed + 2);
  std::unique_ptr<Encoder> encoder = make_bench_encoder(point, init, noise);
  result.parameters = encoder->parameter_count();
  BenchInputs inputs = make_bench_inputs(point, data);
  // A parameterless encoder (bow) still has a backward pass: to its input.
  if (point.mode == BenchMode::Train && encoder->parameters().empty()) inputs.x.set_requires_grad(true);

  Allocator& allocator = allocator_for(point.device);
  std::vector<double> ms;
  int64_t timed_faults = 0;
  for (int64_t rep = 0; rep < point.warmup + point.reps; ++rep) {
    // Gradients of the previous step are dropped first, so every step starts
    // from the same live set and its peak includes the gradients it makes.
    for (const Tensor& p : encoder->parameters()) p.zero_grad();
    const int64_t baseline = allocator.stats().current_bytes;
    allocator.reset_peak();
    const int64_t faults_before = minor_page_faults();
    cuda_synchronize();  // a no-op on the CPU; on a GPU the step's kernels are timed to completion
    const auto start = std::chrono::steady_clock::now();
    run_bench_step(*encoder, inputs, point.mode);
    cuda_synchronize();
    const auto stop = std::chrono::steady_clock::now();
    if (rep < point.warmup) continue;
    timed_faults += minor_page_faults() - faults_before;
    ms.push_back(std::chrono::duration<double, std::milli>(stop - start).count());
    result.peak_bytes = std::max(result.peak_bytes, allocator.stats().peak_bytes - baseline);
  }
  for (const Tensor& p : encoder->parameters()) p.zero_grad();
  result.time = summarize_times(ms);
  result.rss_bytes = peak_rss_bytes();
  result.cached_bytes = allocator.stats().cached_bytes;
  if (!ms.empty()) result.faults_per_step = static_cast<double>(timed_faults) / static_cast<double>(ms.size());
  result.threads = omp_get_max_threads();
  return result;
}

}  // namespace attn
