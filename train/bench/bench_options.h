// `attn bench` settings: what to run (encoders, lengths, modes, device) and
// how (batch, features, repetitions, memory budget), parsed from the command
// line with clear errors, plus the memory-budget rule that stops a model
// before a length whose predicted peak would not fit.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "attn/engine/device.h"

namespace attn {

enum class BenchMode { Infer, Train };
const char* bench_mode_name(BenchMode mode);

// The encoders of the papers' efficiency study (the registry's choice), in the
// order they are run.
const std::vector<std::string>& default_bench_models();

struct BenchSettings {
  std::vector<std::string> models;
  std::vector<int64_t> lengths;
  std::vector<BenchMode> modes;
  int64_t batch = 64;
  int64_t features = 300;
  int64_t hidden = 0;  // 0: each encoder's default width
  std::vector<std::pair<std::string, std::string>> config;  // extra encoder config keys (--set)
  Device device = Device::CPU;
  int64_t threads = 0;  // 0: the OpenMP / OpenBLAS defaults (every core)
  int64_t reps = 5;
  int64_t warmup = 1;
  std::string csv_path, svg_path;
  std::string trace_path;  // --trace: with --profile, every kernel call of the profiled steps as CSV
  std::string save_check_path;  // --save-check: write the float64 numeric check instead of timing
  int64_t mem_limit_bytes = int64_t{8} << 30;
  bool quick = false;
  bool profile = false;
  bool random_lengths = false;
  uint64_t seed = 1;
};

// "16,32,64" or a range "16:384:16" (start:stop:step, stop included when on
// the grid), or a mix "8,16:64:16". Positive, strictly increasing. Throws
// UsageError naming `command` and `flag` on anything else (so do the parsers below).
std::vector<int64_t> parse_length_list(const std::string& text, const std::string& flag = "--lengths",
                                       const std::string& command = "attn bench");
// "mtsa,disan": non-empty comma list without duplicates (names are checked
// against the encoder registry by parse_bench_args).
std::vector<std::string> parse_model_list(const std::string& text, const std::string& command = "attn bench");
// "8589934592", "512MiB", "8GiB", "1.5GiB", also KiB/KB/MB/GB (powers of 1024). Throws UsageError.
int64_t parse_byte_size(const std::string& text, const std::string& flag = "--mem-limit",
                        const std::string& command = "attn bench");
// "key=value,key=value" (encoder config keys for --set). Throws UsageError.
std::vector<std::pair<std::string, std::string>> parse_config_overrides(const std::string& text);
// "infer", "train" or "both".
std::vector<BenchMode> parse_mode_list(const std::string& text, const std::string& command = "attn bench");

// Parses `attn bench` arguments. Returns false when --help was asked for
// (the text is in *help). Throws UsageError on bad input.
bool parse_bench_args(const std::vector<std::string>& args, BenchSettings* settings, std::string* help);

// How an encoder's peak memory grows with the sequence length n at fixed
// batch and width: the registry's exponent (models/encoder.h), 2 for a name
// it does not know.
double memory_growth_exponent(const std::string& model, bool materialized_scores = false);

// The peak expected at `length` from the peak measured at `prev_length`,
// scaled by (length / prev_length)^exponent.
int64_t predict_peak_bytes(int64_t prev_length, int64_t prev_peak_bytes, int64_t length, double exponent);

// The budget rule: a point may run when its predicted peak (0 = nothing to
// predict from) is within the limit.
bool fits_memory_budget(int64_t predicted_peak_bytes, int64_t limit_bytes);

std::string format_bytes(int64_t bytes);  // "1.23 GiB", "456.7 MiB", "12.0 KiB", "17 B"

}  // namespace attn
