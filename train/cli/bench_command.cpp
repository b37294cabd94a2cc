#include "attn/train/cli/bench_command.h"

#include <omp.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>

#include "attn/engine/allocator.h"
#include "attn/engine/cuda/cuda_backend.h"
#include "attn/models/encoder.h"
#include "attn/engine/error.h"
#include "attn/engine/random.h"
#include "attn/util/atomic_file.h"
#include "attn/train/bench/bench_check.h"
#include "attn/train/bench/bench_options.h"
#include "attn/train/bench/bench_report.h"
#include "attn/train/bench/bench_runner.h"
#include "attn/train/bench/bench_sweep.h"
#include "attn/ops/cpu/sgemm_avx512.h"
#include "attn/train/bench/op_profiler.h"
#include "attn/train/bench/step_floor.h"
#include "attn/train/cli/blas_core.h"
#include "attn/train/cli/thread_wait_policy.h"

namespace attn {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void print_machine_line(const BenchSettings& s) {
  std::printf("device %s; threads %d (OpenMP, wait policy %s; GEMMs: ops/cpu/gemm_threads.h, float32 by %s, float64 by "
              "OpenBLAS core %s); batch %lld, features %lld%s, %s masks, seed %llu\n",
              device_name(s.device), omp_get_max_threads(), wait_policy_at_start().c_str(),
              use_own_sgemm() ? "the engine's AVX-512 kernel (ops/cpu/sgemm_avx512.h)" : "OpenBLAS",
              blas_core_description().c_str(),
              static_cast<long long>(s.batch), static_cast<long long>(s.features),
              s.hidden ? (", hidden " + std::to_string(s.hidden)).c_str() : "",
              s.random_lengths ? "random-length" : "all-valid", static_cast<unsigned long long>(s.seed));
  if (!s.config.empty()) {
    std::printf("encoder config:");
    for (const auto& [key, value] : s.config) std::printf(" %s = %s;", key.c_str(), value.c_str());
    std::printf("\n");
  }
}

void write_outputs(const BenchSettings& s, const std::vector<BenchResult>& results) {
  if (!s.csv_path.empty()) write_file_atomically(s.csv_path, bench_csv(results));
  if (!s.svg_path.empty()) {
    const std::string title = "attn bench (" + std::string(device_name(s.device)) + ", batch " +
                              std::to_string(s.batch) + ", " + std::to_string(s.features) +
                              " features; dashed = training)";
    write_file_atomically(s.svg_path, bench_svg(results, title));
  }
}

int run_sweep(const BenchSettings& s) {
  std::printf("attn bench: %zu model(s) x %zu mode(s) x %zu length(s), %lld reps after %lld warm-up, memory budget %s\n",
              s.models.size(), s.modes.size(), s.lengths.size(), static_cast<long long>(s.reps),
              static_cast<long long>(s.warmup), format_bytes(s.mem_limit_bytes).c_str());
  if (s.quick)
    std::printf("--quick: lengths, batch, reps and warm-up reduced (batch %lld instead of 64) so that the whole run "
                "takes about a minute or two\n",
                static_cast<long long>(s.batch));
  print_machine_line(s);
  std::printf("peak MiB: the engine allocator's peak above the pre-step level (max over timed steps); RSS MiB: the "
              "process's peak resident set so far; cache MiB: freed blocks the allocator retains for reuse after "
              "the point; faults/step: the process's minor page faults per timed step (0 once every buffer is "
              "reused)\n\n");
  std::printf("%s", bench_table_header().c_str());
  std::fflush(stdout);

  const auto start = Clock::now();
  const std::vector<BenchResult> results =
      run_length_sweep(s, [&](const BenchResult& latest, const std::vector<BenchResult>& all) {
        std::printf("%s", bench_table_row(latest).c_str());
        std::fflush(stdout);
        write_outputs(s, all);
      });
  const double elapsed = seconds_since(start);
  std::printf("\nbench: %zu points in %.1f s\n", results.size(), elapsed);
  if (!s.csv_path.empty()) std::printf("wrote %s\n", s.csv_path.c_str());
  if (!s.svg_path.empty()) std::printf("wrote %s\n", s.svg_path.c_str());
  return 0;
}

int run_profile(const BenchSettings& s) {
  std::printf("attn bench --profile: one training step (forward + backward of sum(tokens) + sum(sentence)) after %lld "
              "warm-up step(s), time and bytes by kernel op; then the median of %lld unprofiled step(s)\n",
              static_cast<long long>(s.warmup), static_cast<long long>(s.reps));
  print_machine_line(s);
  MachineRates rates;
  if (s.device == Device::CPU) {
    rates = measure_machine_rates();
    std::printf("%s", format_rates(rates).c_str());
  }
  std::string trace = "model,length,call,depth,op,self_ms,bytes_allocated,tensors\n";
  for (const std::string& model : s.models) {
    for (int64_t n : s.lengths) {
      BenchPoint point = sweep_point(s, model, BenchMode::Train, n);
      Generator init(point.seed), noise(point.seed + 1), data(point.seed + 2);
      std::unique_ptr<Encoder> encoder = make_bench_encoder(point, init, noise);
      BenchInputs inputs = make_bench_inputs(point, data);
      if (encoder->parameters().empty()) inputs.x.set_requires_grad(true);  // bow: backward to the input
      for (int64_t w = 0; w < s.warmup; ++w) run_bench_step(*encoder, inputs, BenchMode::Train);
      for (const Tensor& p : encoder->parameters()) p.zero_grad();

      Allocator& allocator = allocator_for(s.device);
      const int64_t baseline = allocator.stats().current_bytes;
      allocator.reset_peak();
      std::vector<OpStats> table;
      double wall_ms = 0;
      int64_t unattributed = 0;
      KernelWork work;
      {
        OpProfiler profiler(s.device);
        profiler.log_calls(!s.trace_path.empty());
        cuda_synchronize();
        const auto start = Clock::now();
        run_bench_step(*encoder, inputs, BenchMode::Train);
        cuda_synchronize();
        wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
        table = profiler.table();
        unattributed = profiler.unattributed_bytes();
        work = profiler.work();
        trace += kernel_calls_csv(profiler.calls(), model + "," + std::to_string(n) + ",");
      }
      const int64_t peak = allocator.stats().peak_bytes - baseline;
      // One profiled step is one sample of a noisy machine, with the
      // profiler's cost in it: the median of --reps plain steps says how far
      // the step is from its floor.
      // On the CPU each is followed by a GEMM rate probe: the step against
      // the floor at the speed the machine had just then.
      std::unique_ptr<GemmRateProbe> probe;
      if (s.device == Device::CPU) probe = std::make_unique<GemmRateProbe>();
      std::vector<double> plain_ms, paired_ratios, probe_gflops;
      for (int64_t r = 0; r < s.reps; ++r) {
        cuda_synchronize();
        const auto start = Clock::now();
        run_bench_step(*encoder, inputs, BenchMode::Train);
        cuda_synchronize();
        plain_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
        if (probe) {
          MachineRates now = rates;
          now.gemm_gflops = probe->gflops();
          probe_gflops.push_back(now.gemm_gflops);
          paired_ratios.push_back(plain_ms.back() / step_floor(work, now).total_ms());
        }
      }
      const double median_ms = summarize_times(plain_ms).median_ms;
      std::printf("\n%s, length %lld, batch %lld, features %lld: step %.1f ms, allocator peak %s\n", model.c_str(),
                  static_cast<long long>(n), static_cast<long long>(s.batch), static_cast<long long>(s.features),
                  wall_ms, format_bytes(peak).c_str());
      std::printf("%s", format_op_table(table, wall_ms, unattributed).c_str());
      if (s.device == Device::CPU) {
        std::printf("%s", format_floor(work, step_floor(work, rates), wall_ms, median_ms, s.reps).c_str());
        // summarize_times gives any list's median and range, not only times.
        const TimeSummary ratios = summarize_times(paired_ratios);
        std::printf("paired: each unprofiled step / the floor at the GEMM rate of a 1024^3 product right after it "
                    "(median %.1f GFLOP/s): median %.2f (min %.2f, max %.2f)\n",
                    summarize_times(probe_gflops).median_ms, ratios.median_ms, ratios.min_ms, ratios.max_ms);
      } else {
        std::printf("median of %lld unprofiled step(s): %.1f ms\n", static_cast<long long>(s.reps), median_ms);
      }
      if (!s.trace_path.empty()) write_file_atomically(s.trace_path, trace);
      std::fflush(stdout);
    }
  }
  if (!s.trace_path.empty()) std::printf("wrote %s\n", s.trace_path.c_str());
  return 0;
}

int run_save_check(const BenchSettings& s) {
  const BenchPoint point = sweep_point(s, s.models[0], s.modes[0], s.lengths[0]);
  save_bench_check(point, s.save_check_path);
  std::printf("wrote %s: %s, %s mode, batch %lld, length %lld, %lld features, float64, seed %llu\n",
              s.save_check_path.c_str(), point.model.c_str(), bench_mode_name(point.mode),
              static_cast<long long>(point.batch), static_cast<long long>(point.length),
              static_cast<long long>(point.features), static_cast<unsigned long long>(point.seed));
  return 0;
}

}  // namespace

int run_bench_command(const std::vector<std::string>& args) {
  BenchSettings settings;
  std::string help;
  if (!parse_bench_args(args, &settings, &help)) {
    std::cout << help;
    return 0;
  }
  check_bench_device(settings.device);
  if (settings.threads > 0) {
    omp_set_num_threads(static_cast<int>(settings.threads));  // GEMMs too: ops/cpu/gemm_threads.h
  }
  if (!settings.save_check_path.empty()) return run_save_check(settings);
  return settings.profile ? run_profile(settings) : run_sweep(settings);
}

}  // namespace attn
