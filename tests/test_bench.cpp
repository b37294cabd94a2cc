// `attn bench`: argument parsing (length ranges, sizes, bad flags), the
// memory-budget rule, the op profiler's attribution, the SVG writer, and a
// tiny end-to-end run that writes the CSV. No timing assertions.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "attn/engine/cpu_caching_allocator.h"
#include <sys/mman.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "attn/engine/autograd.h"
#include "attn/engine/cpu_caching_allocator.h"
#include "attn/engine/random.h"
#include "attn/ops/matmul/matmul.h"
#include "attn/ops/unary/unary.h"
#include "attn/ops/view/view.h"
#include "attn/engine/error.h"
#include "attn/train/cli/bench_command.h"
#include "attn/train/bench/bench_options.h"
#include "attn/train/bench/bench_report.h"
#include "attn/train/bench/bench_runner.h"
#include "attn/util/cli_args.h"
#include "attn/train/bench/op_profiler.h"
#include "attn/util/svg_chart.h"
#include "bench_args_util.h"
#include "test_util.h"

namespace attn {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string usage_error_of(const std::vector<std::string>& args) { return testing_support::bench_usage_error(args); }

int count_of(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

TEST(BenchArgs, LengthListsAndRanges) {
  EXPECT_THAT(parse_length_list("16,32,64"), ElementsAre(16, 32, 64));
  EXPECT_THAT(parse_length_list("16:64:16"), ElementsAre(16, 32, 48, 64));
  EXPECT_THAT(parse_length_list("16:70:16"), ElementsAre(16, 32, 48, 64));
  EXPECT_THAT(parse_length_list("8, 16:48:16,100"), ElementsAre(8, 16, 32, 48, 100));
  EXPECT_EQ(parse_length_list("16:384:16").size(), 24u);
  EXPECT_EQ(parse_length_list("16:384:16").back(), 384);
}

TEST(BenchArgs, HugeLengthsAndRangesAreBoundedNotAllocated) {
  auto message = [](const std::string& text) {
    try {
      parse_length_list(text);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_THAT(message("1:9223372036854775807:1"), HasSubstr("is above the limit of 65536 tokens"));
  EXPECT_THAT(message("1:65536:1"), HasSubstr("gives more than 1024 lengths"));
  EXPECT_THAT(message("70000"), HasSubstr("length 70000 is above the limit"));
  EXPECT_EQ(parse_length_list("1:65536:9223372036854775807").size(), 1u);  // a step past the limit ends the range
  EXPECT_EQ(parse_length_list("64:65536:64").size(), 1024u);
}

TEST(BenchArgs, BadLengthsAreClearUsageErrors) {
  EXPECT_THROW(parse_length_list(""), UsageError);
  EXPECT_THROW(parse_length_list("16,abc"), UsageError);
  EXPECT_THROW(parse_length_list("0,16"), UsageError);
  EXPECT_THROW(parse_length_list("16:8:4"), UsageError);
  EXPECT_THROW(parse_length_list("16:64"), UsageError);
  EXPECT_THROW(parse_length_list("16:64:0"), UsageError);
  EXPECT_THROW(parse_length_list("32,16"), UsageError);
  EXPECT_THAT(usage_error_of({"--lengths", "16:64"}), HasSubstr("START:STOP:STEP"));
  EXPECT_THAT(usage_error_of({"--lengths", "16,x"}), HasSubstr("'x'"));
}

TEST(BenchArgs, ConfigOverrides) {
  const auto kv = parse_config_overrides("layers=3, heads = 6");
  ASSERT_EQ(kv.size(), 2u);
  EXPECT_EQ(kv[0], std::make_pair(std::string("layers"), std::string("3")));
  EXPECT_EQ(kv[1], std::make_pair(std::string("heads"), std::string("6")));
  EXPECT_TRUE(parse_config_overrides("").empty());
  EXPECT_THROW(parse_config_overrides("layers"), UsageError);
  EXPECT_THROW(parse_config_overrides("=3"), UsageError);
  EXPECT_THAT(usage_error_of({"--models", "transformer", "--set", "no_such_key=1"}), HasSubstr("no_such_key"));
  BenchSettings s;
  std::string help;
  ASSERT_TRUE(parse_bench_args({"--models", "transformer", "--set", "layers=2"}, &s, &help));
  EXPECT_EQ(s.config.size(), 1u);
}

TEST(BenchArgs, ByteSizes) {
  EXPECT_EQ(parse_byte_size("8GiB"), int64_t{8} << 30);
  EXPECT_EQ(parse_byte_size("512MiB"), int64_t{512} << 20);
  EXPECT_EQ(parse_byte_size("1.5GiB"), int64_t{3} << 29);
  EXPECT_EQ(parse_byte_size("1000"), 1000);
  EXPECT_THROW(parse_byte_size("8 parsecs"), UsageError);
  EXPECT_THROW(parse_byte_size("-1GiB"), UsageError);
  EXPECT_THROW(parse_byte_size(""), UsageError);
}

TEST(BenchArgs, DefaultsQuickAndOverrides) {
  BenchSettings s;
  std::string help;
  ASSERT_TRUE(parse_bench_args({}, &s, &help));
  EXPECT_EQ(s.models, default_bench_models());
  EXPECT_EQ(s.lengths.size(), 24u);
  EXPECT_EQ(s.batch, 64);
  EXPECT_EQ(s.features, 300);
  EXPECT_EQ(s.modes.size(), 2u);
  EXPECT_EQ(s.mem_limit_bytes, int64_t{8} << 30);

  ASSERT_TRUE(parse_bench_args({"--quick"}, &s, &help));
  EXPECT_THAT(s.lengths, ElementsAre(16, 64, 128));
  EXPECT_EQ(s.reps, 2);
  EXPECT_EQ(s.warmup, 1);
  EXPECT_LT(s.batch, 64);
  EXPECT_EQ(s.features, 300);

  ASSERT_TRUE(parse_bench_args({"--quick", "--batch=4", "--reps", "3", "--models", "mtsa,bow", "--mode", "train"}, &s,
                               &help));
  EXPECT_EQ(s.batch, 4);
  EXPECT_EQ(s.reps, 3);
  EXPECT_THAT(s.models, ElementsAre("mtsa", "bow"));
  EXPECT_EQ(s.modes, std::vector<BenchMode>{BenchMode::Train});

  ASSERT_TRUE(parse_bench_args({"--profile"}, &s, &help));
  EXPECT_THAT(s.models, ElementsAre("mtsa"));
  EXPECT_THAT(s.lengths, ElementsAre(64));
}

TEST(BenchArgs, HelpAndBadFlags) {
  BenchSettings s;
  std::string help;
  EXPECT_FALSE(parse_bench_args({"--help"}, &s, &help));
  for (const char* flag : {"--models", "--lengths", "--mem-limit", "--profile", "--quick", "--csv", "--svg"})
    EXPECT_THAT(help, HasSubstr(flag));
  EXPECT_THAT(usage_error_of({"--no-such-flag"}), HasSubstr("unknown flag '--no-such-flag'"));
  EXPECT_THAT(usage_error_of({"--models", "mtsa,nosuch"}), HasSubstr("unknown encoder 'nosuch'"));
  EXPECT_THAT(usage_error_of({"--models", "mtsa,,disan"}), HasSubstr("empty name"));
  EXPECT_THAT(usage_error_of({"--models", "mtsa,mtsa"}), HasSubstr("twice"));
  EXPECT_THAT(usage_error_of({"--mode", "fast"}), HasSubstr("infer, train or both"));
  EXPECT_THAT(usage_error_of({"--device", "tpu"}), HasSubstr("cpu or cuda"));
  EXPECT_THAT(usage_error_of({"--batch", "0"}), HasSubstr("--batch must be at least 1"));
  EXPECT_THAT(usage_error_of({"--reps", "two"}), HasSubstr("expects an integer"));
  EXPECT_THAT(usage_error_of({"--mem-limit", "lots"}), HasSubstr("--mem-limit"));
  EXPECT_THAT(usage_error_of({"--quick", "--profile"}), HasSubstr("do not go together"));
  EXPECT_THAT(usage_error_of({"--trace", "calls.csv"}), HasSubstr("add --profile"));
}

TEST(BenchMemoryBudget, PredictsByTheModelsPower) {
  EXPECT_EQ(memory_growth_exponent("disan"), 1.25);  // fused attention: O(n d) tensors
  EXPECT_EQ(memory_growth_exponent("disan", true), 2.0);  // materialize_scores: [B, n, n, d]
  EXPECT_EQ(memory_growth_exponent("mstrans"), 2.0);  // default scales grow with n
  EXPECT_EQ(memory_growth_exponent("bow"), 1.0);
  EXPECT_EQ(memory_growth_exponent("something-new"), 2.0);
  // DiSAN's n x n x d tensors: doubling the length quadruples the peak.
  EXPECT_EQ(predict_peak_bytes(64, 1000, 128, 2.0), 4000);
  EXPECT_EQ(predict_peak_bytes(64, 1000, 128, 1.0), 2000);
  EXPECT_EQ(predict_peak_bytes(0, 0, 16, 2.0), 0);  // nothing measured yet: nothing predicted
  EXPECT_TRUE(fits_memory_budget(0, 100));
  EXPECT_TRUE(fits_memory_budget(100, 100));
  EXPECT_FALSE(fits_memory_budget(101, 100));
  // 3 GiB at n = 128 predicts 12 GiB at 256: over an 8 GiB budget.
  EXPECT_FALSE(fits_memory_budget(predict_peak_bytes(128, int64_t{3} << 30, 256, 2.0), int64_t{8} << 30));
}

TEST(BenchOpProfiler, AttributesCallsToTheirOps) {
  Generator g(3);
  Tensor a = rand_uniform({16, 32}, -1, 1, g), b = rand_uniform({32, 8}, -1, 1, g);
  Tensor w = rand_uniform({4, 8}, -1, 1, g), bias = rand_uniform({4}, -1, 1, g);
  std::vector<OpStats> table;
  {
    OpProfiler profiler;
    NoGrad no_grad;
    Tensor c = matmul(a, b);                    // [16, 8]
    Tensor d = matmul(transpose(c, 0, 1), c);   // [8, 8]
    Tensor e = linear(c, w, bias);              // [16, 4]; may copy the bias through a nested kernel
    Tensor f = tanh(e);
    table = profiler.table();
  }
  std::map<std::string, OpStats> by_op;
  for (const OpStats& s : table) by_op[s.op] = s;
  ASSERT_TRUE(by_op.count("matmul"));
  ASSERT_TRUE(by_op.count("linear"));
  EXPECT_EQ(by_op["matmul"].calls, 2);
  EXPECT_EQ(by_op["linear"].calls, 1);
  EXPECT_GE(by_op["matmul"].ms, 0.0);
  // The matmul outputs ([16, 8] and [8, 8] floats) are charged to matmul.
  EXPECT_GE(by_op["matmul"].bytes_allocated, (16 * 8 + 8 * 8) * 4);
  // linear's output is charged to linear even when its kernel calls another kernel.
  EXPECT_GE(by_op["linear"].bytes_allocated, 16 * 4 * 4);
  // tanh is some other op, not a GEMM.
  int64_t other_calls = 0;
  for (const OpStats& s : table)
    if (!is_gemm_op(s.op)) other_calls += s.calls;
  EXPECT_GE(other_calls, 1);
  EXPECT_DOUBLE_EQ(gemm_ms(table), by_op["matmul"].ms + by_op["linear"].ms);
  EXPECT_TRUE(is_gemm_op("matmul_summed"));  // a shared weight's gradient (ops/matmul/matmul_kernels.h)
  EXPECT_TRUE(is_gemm_op("matmul_bias"));    // MTSA's per-head layers with their bias
  EXPECT_THAT(format_op_table(table, 1.0, 0),
              HasSubstr("GEMM (matmul, matmul_bias, matmul_summed, linear, modulated_linear)"));
  // The observer is removed again.
  EXPECT_EQ(kernel_observer(), nullptr);
}

// attn bench --trace: every call in order, nested calls one level deeper,
// each with its tensors' dtypes, shapes and (non-contiguous) strides.
TEST(BenchOpProfiler, LogsEveryCallWithItsTensors) {
  Generator g(4);
  Tensor a = rand_uniform({16, 32}, -1, 1, g), b = rand_uniform({32, 8}, -1, 1, g);
  // A strided bias is copied into linear's output by a nested kernel (a
  // contiguous one is added by the engine's AVX-512 GEMM as it stores).
  Tensor w = rand_uniform({4, 8}, -1, 1, g), bias = slice(rand_uniform({8}, -1, 1, g), 0, 0, 8, 2);
  std::vector<KernelCall> calls;
  {
    OpProfiler profiler;
    profiler.log_calls(true);
    NoGrad no_grad;
    Tensor c = matmul(transpose(a, 0, 1), a);  // [32, 32] from a transposed view
    Tensor d = matmul(a, b);                   // [16, 8]
    Tensor e = linear(d, w, bias);             // copies the bias in a nested kernel, then the GEMM
    Tensor f = tanh(e);
    calls = profiler.calls();
  }
  ASSERT_GE(calls.size(), 4u);
  EXPECT_EQ(calls[0].op, "matmul");
  EXPECT_EQ(calls[0].depth, 0);
  EXPECT_THAT(calls[0].tensors, HasSubstr("float32 [32, 16] strides [1, 32]"));
  EXPECT_THAT(calls[0].tensors, HasSubstr("float32 [32, 32]"));
  EXPECT_GE(calls[0].bytes_allocated, 32 * 32 * 4);
  EXPECT_EQ(calls.back().op, "unary");
  bool nested_copy = false;  // linear's bias copy runs inside linear's kernel
  for (const KernelCall& c : calls) nested_copy = nested_copy || (c.op == "copy" && c.depth == 1);
  EXPECT_TRUE(nested_copy);
  for (const KernelCall& c : calls) EXPECT_GE(c.self_ms, 0.0) << c.op;
  const std::string csv = kernel_calls_csv(calls, "mtsa,64,");
  EXPECT_EQ(count_of(csv, "\n"), static_cast<int64_t>(calls.size()));
  EXPECT_EQ(csv.rfind("mtsa,64,0,0,matmul,", 0), 0u);
  EXPECT_THAT(csv, HasSubstr(",\"float32 [32, 16] strides [1, 32]; "));
  EXPECT_EQ(kernel_observer(), nullptr);
}

TEST(BenchSvgChart, WellFormedWithAPolylinePerSeriesAndALegend) {
  ChartPanel time{"Time", "length", "ms", {}, true};
  time.series.push_back({"mtsa infer", {{16, 1.5}, {32, 3.0}, {64, 9.0}}, 0, false});
  time.series.push_back({"disan train", {{16, 20}, {32, 80}}, 1, true});
  time.series.push_back({"a<b & \"c\"", {{16, 2}}, 2, false});
  ChartPanel mem{"Memory", "length", "MiB", {}, false};
  mem.series = time.series;
  const std::string svg = render_svg_chart("bench <test>", {time, mem});
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  EXPECT_THAT(svg, HasSubstr("<svg xmlns=\"http://www.w3.org/2000/svg\""));
  EXPECT_THAT(svg, HasSubstr("</svg>"));
  EXPECT_EQ(count_of(svg, "<polyline"), 6);  // 3 series x 2 panels
  EXPECT_EQ(count_of(svg, "<g class=\"panel\">"), 2);
  EXPECT_EQ(count_of(svg, "<g"), count_of(svg, "</g>"));
  EXPECT_EQ(count_of(svg, "<text"), count_of(svg, "</text>"));
  for (const char* name : {">mtsa infer<", ">disan train<", "a&lt;b &amp; &quot;c&quot;", "bench &lt;test&gt;"})
    EXPECT_THAT(svg, HasSubstr(name));
  EXPECT_THAT(svg, HasSubstr("stroke-dasharray"));
  // Nothing unescaped inside text: no stray '&' that is not an entity.
  for (size_t at = svg.find('&'); at != std::string::npos; at = svg.find('&', at + 1))
    EXPECT_TRUE(svg.compare(at, 4, "&lt;") == 0 || svg.compare(at, 4, "&gt;") == 0 ||
                svg.compare(at, 5, "&amp;") == 0 || svg.compare(at, 6, "&quot;") == 0);
  // Axes have ticks with labels: the log axis spans 1..100 ms.
  EXPECT_THAT(svg, HasSubstr(">10</text>"));
  EXPECT_THAT(svg, HasSubstr(">40</text>"));
}

TEST(BenchSvgChart, Ticks) {
  EXPECT_THAT(linear_ticks(0, 10, 5), ElementsAre(0, 2, 4, 6, 8, 10));
  EXPECT_THAT(linear_ticks(16, 384, 6), ElementsAre(0, 100, 200, 300, 400));
  EXPECT_THAT(log_ticks(1, 100), ElementsAre(1, 2, 5, 10, 20, 50, 100));
  EXPECT_THAT(log_ticks(1, 1e6), ElementsAre(1, 10, 100, 1000, 1e4, 1e5, 1e6));
}

class BenchEndToEnd : public ::testing::Test {
 protected:
  std::string path(const std::string& name) const { return testing_support::scratch_path(name); }
  static std::vector<std::string> lines_of(const std::string& file) {
    std::ifstream in(file);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  }
};

TEST_F(BenchEndToEnd, TinyRunWritesCsvAndSvg) {
  const std::string csv = path("tiny.csv"), svg = path("tiny.svg");
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  const int rc = run_bench_command({"--models", "mtsa,disan", "--batch", "2", "--lengths", "8", "--features", "8",
                                    "--hidden", "8", "--reps", "1", "--warmup", "0", "--mode", "both", "--csv", csv,
                                    "--svg", svg, "--random-lengths"});
  const std::string out = ::testing::internal::GetCapturedStdout();
  ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(rc, 0);
  EXPECT_THAT(out, HasSubstr("mtsa"));
  const std::vector<std::string> lines = lines_of(csv);
  ASSERT_EQ(lines.size(), 5u);  // header + 2 models x 2 modes
  std::string header;
  for (size_t i = 0; i < bench_csv_columns().size(); ++i) header += (i ? "," : "") + bench_csv_columns()[i];
  EXPECT_EQ(lines[0], header);
  EXPECT_THAT(lines[0], HasSubstr("model,mode,device,batch,length,features,reps,status,median_ms"));
  EXPECT_EQ(lines[1].rfind("mtsa,infer,cpu,2,8,8,1,ok,", 0), 0u) << lines[1];
  EXPECT_EQ(lines[2].rfind("mtsa,train,cpu,2,8,8,1,ok,", 0), 0u) << lines[2];
  EXPECT_EQ(lines[3].rfind("disan,infer,cpu,2,8,8,1,ok,", 0), 0u) << lines[3];
  EXPECT_EQ(lines[4].rfind("disan,train,cpu,2,8,8,1,ok,", 0), 0u) << lines[4];
  std::stringstream svg_text;
  svg_text << std::ifstream(svg).rdbuf();
  EXPECT_EQ(count_of(svg_text.str(), "<polyline"), 8);  // 4 series x 2 panels
  EXPECT_THAT(svg_text.str(), HasSubstr("disan train"));
  std::remove(csv.c_str());
  std::remove(svg.c_str());
}

TEST(BenchRunner, ReportsTheBytesTheCpuCacheRetains) {
  BenchPoint point;
  point.model = "mtsa";
  point.mode = BenchMode::Train;
  point.batch = 2;
  point.length = 8;
  point.features = 8;
  point.hidden = 8;
  point.reps = 1;
  const BenchResult r = run_bench_point(point);
  ASSERT_EQ(r.status, "ok");
  // The step's intermediates and gradients were freed into the cache, which keeps them.
  EXPECT_GT(r.cached_bytes, 0);
  EXPECT_LE(r.cached_bytes, cpu_cache_stats().limit_bytes);
}

// The faults/step column counts first touches of fresh pages: a fresh
// anonymous mapping faults when it is written (at least once, however large
// the pages the kernel backs it with).
TEST(BenchRunner, MinorPageFaultsCountFirstTouches) {
  const size_t bytes = size_t(4) << 20;
  void* region = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(region, MAP_FAILED);
  const int64_t before = minor_page_faults();
  for (size_t at = 0; at < bytes; at += 4096) static_cast<volatile char*>(region)[at] = 1;
  const int64_t after = minor_page_faults();
  ::munmap(region, bytes);
  EXPECT_GE(after - before, 1);
}

TEST_F(BenchEndToEnd, MemoryBudgetStopsAModel) {
  const std::string csv = path("budget.csv");
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  const int rc = run_bench_command({"--models", "disan", "--batch", "2", "--lengths", "4,8,16", "--features", "4",
                                    "--hidden", "4", "--reps", "1", "--warmup", "0", "--mode", "infer", "--csv", csv,
                                    "--mem-limit", "1000"});
  const std::string out = ::testing::internal::GetCapturedStdout();
  ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(rc, 0);
  EXPECT_THAT(out, HasSubstr("out of memory budget"));
  const std::vector<std::string> lines = lines_of(csv);
  ASSERT_GE(lines.size(), 2u);
  ASSERT_LE(lines.size(), 3u);  // the model stopped before the last length
  EXPECT_THAT(lines.back(), HasSubstr(",over_budget,"));
  std::remove(csv.c_str());
}

TEST_F(BenchEndToEnd, ProfileReportsGemmShare) {
  ::testing::internal::CaptureStdout();
  int rc = -1;
  try {
    rc = run_bench_command({"--profile", "--models", "transformer", "--batch", "2", "--lengths", "6", "--features",
                            "8", "--hidden", "20", "--warmup", "0"});
  } catch (const std::exception& e) {
    ADD_FAILURE() << e.what();
  }
  const std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(rc, 0);
  EXPECT_THAT(out, HasSubstr("linear"));
  EXPECT_THAT(out, HasSubstr("GEMM (matmul, matmul_bias, matmul_summed, linear, modulated_linear)"));
}

TEST(BenchDevice, CudaWithoutTheBackendIsAClearError) {
  if (built_with_cuda()) GTEST_SKIP() << "this build has the CUDA backend";
  try {
    run_bench_command({"--device", "cuda", "--models", "mtsa", "--lengths", "8", "--batch", "1"});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("the CUDA backend is not available in this build"));
  }
}

}  // namespace
}  // namespace attn
