#include "attn/train/bench/bench_sweep.h"

#include <chrono>
#include <cstdio>
#include <new>

#include "attn/engine/error.h"
#include "attn/models/config.h"
#include "attn/models/encoder.h"

namespace attn {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Whether `model` builds materialised scores under the --set keys; an
// encoder without the key never does.
bool materializes_scores(const std::string& model, const Config& overrides) {
  const EncoderInfo* info = find_encoder(model);
  if (!info || !info->config_keys().find("materialize_scores")) return false;
  return info->config_keys().get_bool(overrides, "materialize_scores");
}

BenchResult failed_point(const BenchPoint& point, const std::string& status, const std::string& note) {
  BenchResult r;
  r.point = point;
  r.status = status;
  r.note = note;
  return r;
}

}  // namespace

BenchResult run_bench_point_or_error(const BenchPoint& point) {
  try {
    return run_bench_point(point);
  } catch (const std::bad_alloc&) {
    return failed_point(point, "error", "out of memory (std::bad_alloc)");
  } catch (const Error& e) {
    return failed_point(point, "error", e.what());
  }
}

BenchPoint sweep_point(const BenchSettings& s, const std::string& model, BenchMode mode, int64_t length) {
  BenchPoint p;
  p.model = model;
  p.mode = mode;
  p.batch = s.batch;
  p.length = length;
  p.features = s.features;
  p.hidden = s.hidden;
  p.config = s.config;
  p.device = s.device;
  p.reps = s.reps;
  p.warmup = s.warmup;
  p.random_lengths = s.random_lengths;
  p.seed = s.seed;
  return p;
}

std::vector<BenchResult> run_length_sweep(const BenchSettings& s, const SweepListener& on_result) {
  const auto start = Clock::now();
  const size_t total = s.models.size() * s.modes.size() * s.lengths.size();
  size_t done = 0;
  std::vector<BenchResult> results;
  Config overrides;
  for (const auto& [key, value] : s.config) overrides.set(key, value);
  for (const std::string& model : s.models) {
    const double growth = memory_growth_exponent(model, materializes_scores(model, overrides));
    for (BenchMode mode : s.modes) {
      int64_t prev_length = 0, prev_peak = 0;
      for (size_t li = 0; li < s.lengths.size(); ++li) {
        const int64_t n = s.lengths[li];
        const BenchPoint point = sweep_point(s, model, mode, n);
        ++done;
        const int64_t predicted = predict_peak_bytes(prev_length, prev_peak, n, growth);
        BenchResult r;
        if (!fits_memory_budget(predicted, s.mem_limit_bytes)) {
          r = failed_point(point, "over_budget",
                           "predicted peak " + format_bytes(predicted) + " > limit " + format_bytes(s.mem_limit_bytes));
          r.peak_bytes = predicted;
        } else {
          std::fprintf(stderr, "[%zu/%zu %.0fs] %s %s length %lld ...\n", done, total, seconds_since(start),
                       model.c_str(), bench_mode_name(mode), static_cast<long long>(n));
          r = run_bench_point_or_error(point);
          if (r.status == "ok" && r.peak_bytes > s.mem_limit_bytes) {
            r.status = "over_budget";
            r.note = "measured peak " + format_bytes(r.peak_bytes) + " > limit " + format_bytes(s.mem_limit_bytes);
          }
        }
        results.push_back(r);
        on_result(r, results);
        if (r.status != "ok") {
          done += s.lengths.size() - li - 1;
          break;
        }
        prev_length = n;
        prev_peak = r.peak_bytes;
      }
    }
  }
  std::fprintf(stderr, "[%zu/%zu %.0fs] done\n", total, total, seconds_since(start));
  return results;
}

}  // namespace attn
