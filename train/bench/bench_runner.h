// One point of `attn bench`: an encoder at one batch x length x features, in
// inference or training mode, timed over repetitions after warm-up, with the
// allocator's peak bytes per step.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "attn/models/encoder.h"
#include "attn/train/bench/bench_options.h"

namespace attn {

struct BenchPoint {
  std::string model;
  BenchMode mode = BenchMode::Infer;
  int64_t batch = 1, length = 1, features = 1;
  int64_t hidden = 0;  // 0: the encoder's default
  std::vector<std::pair<std::string, std::string>> config;  // extra config keys
  Device device = Device::CPU;
  int64_t reps = 1, warmup = 0;
  bool random_lengths = false;
  uint64_t seed = 1;
  DType dtype = DType::F32;  // of the encoder and its inputs (the numeric check uses float64)
};

// Wall times of the repetitions, summarised.
struct TimeSummary {
  double median_ms = 0, min_ms = 0, max_ms = 0, q1_ms = 0, q3_ms = 0;
};
TimeSummary summarize_times(std::vector<double> ms);  // ms non-empty

struct BenchResult {
  BenchPoint point;
  std::string status = "ok";  // "ok", "over_budget" (not run or stopped), "error"
  std::string note;           // why, for over_budget and error rows
  TimeSummary time;
  int64_t peak_bytes = 0;     // allocator peak above the pre-step level, max over timed steps (or the prediction)
  int64_t rss_bytes = 0;      // the process's peak resident set so far (getrusage ru_maxrss)
  int64_t cached_bytes = 0;   // what the device allocator's cache retains after the point's steps
  double faults_per_step = 0;  // minor page faults of the process per timed step (getrusage ru_minflt)
  int64_t parameters = 0;
  int64_t threads = 0;        // OpenMP threads the point ran with
};

// The encoder a point runs: registry defaults, `hidden` and the extra keys set,
// on the point's device.
std::unique_ptr<Encoder> make_bench_encoder(const BenchPoint& point, Generator& init, Generator& noise);

// Random inputs x [B, n, features] ~ U(-1, 1) and the [B, n] uint8 mask
// (all valid, or random lengths in [1, n]), on the point's device.
struct BenchInputs {
  Tensor x, mask;
};
BenchInputs make_bench_inputs(const BenchPoint& point, Generator& gen);

// One step: inference runs encode() under NoGrad in evaluation mode; training
// clears the gradients, runs encode() in training mode and backpropagates
// sum(tokens) + sum(sentence) into every parameter (and into x when it
// requires a gradient). Everything the step made is released before it returns.
void run_bench_step(Encoder& encoder, const BenchInputs& inputs, BenchMode mode);
// The same step, returning the encoder's outputs (the numeric check keeps them).
EncoderOutput run_bench_step_with_outputs(Encoder& encoder, const BenchInputs& inputs, BenchMode mode);

// Builds the encoder and inputs, runs warmup + reps steps, and reports the
// median and spread of the timed steps and their peak allocator bytes.
BenchResult run_bench_point(const BenchPoint& point);

// Peak resident set size of this process in bytes.
int64_t peak_rss_bytes();
// Minor page faults of this process so far (first touches of fresh pages).
int64_t minor_page_faults();

// Throws a clear Error when `device` cannot run here (CUDA without the
// backend in this build).
void check_bench_device(Device device);

}  // namespace attn
