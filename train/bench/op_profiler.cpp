#include "attn/train/bench/op_profiler.h"

#include <algorithm>
#include <cstdio>

#include "attn/engine/cuda/cuda_backend.h"
#include "attn/engine/error.h"
#include "attn/engine/shape.h"
#include "attn/engine/tensor.h"

namespace attn {

OpProfiler::OpProfiler(Device device)
    : device_(device), inner_(allocator_for(device)), counting_(inner_), previous_observer_(nullptr) {
  set_allocator(device_, &counting_);
  previous_observer_ = set_kernel_observer(this);
}

OpProfiler::~OpProfiler() {
  set_kernel_observer(previous_observer_);
  set_allocator(device_, &inner_);
}

void OpProfiler::before(const char* op, Device device) {
  if (device == Device::CUDA) cuda_synchronize();  // time the kernel, not its launch
  const int64_t allocated = counting_.allocated();
  const int64_t pending = allocated - charged_bytes_;
  charged_bytes_ = allocated;
  // Top level: the bytes since the previous kernel are this op's outputs.
  // Nested: they were allocated by the enclosing kernel before this call.
  if (!stack_.empty()) stack_.back().bytes += pending;
  stack_.push_back({op, std::chrono::steady_clock::now(), 0.0, stack_.empty() ? pending : 0, {}});
}

void OpProfiler::after(const char* op, Device device) {
  if (device == Device::CUDA) cuda_synchronize();
  const auto now = std::chrono::steady_clock::now();
  if (stack_.empty()) return;  // installed mid-call: nothing to close
  Frame frame = stack_.back();
  stack_.pop_back();
  const double elapsed = std::chrono::duration<double, std::milli>(now - frame.start).count();
  if (!stack_.empty()) stack_.back().child_ms += elapsed;
  OpStats& s = stats_[frame.op];
  s.op = frame.op;
  s.calls += 1;
  s.ms += elapsed - frame.child_ms;
  const int64_t allocated = counting_.allocated();
  const int64_t bytes = frame.bytes + (allocated - charged_bytes_);
  s.bytes_allocated += bytes;
  charged_bytes_ = allocated;
  if (log_calls_)
    calls_.push_back({frame.op, static_cast<int64_t>(stack_.size()), elapsed - frame.child_ms, bytes,
                      std::move(frame.tensors)});
}

std::string describe_kernel_tensors(KernelTensors args) {
  std::string out;
  for (size_t i = 0; i < args.size; ++i) {
    const Tensor* t = args.items[i];
    if (t == nullptr) continue;  // a scalar or an op code
    if (!out.empty()) out += "; ";
    if (!t->defined()) {
      out += "-";
      continue;
    }
    out += std::string(dtype_name(t->dtype())) + " " + shape_str(t->shape());
    if (!t->is_contiguous()) out += " strides " + shape_str(t->strides());
  }
  return out;
}

std::string kernel_calls_csv(const std::vector<KernelCall>& calls, const std::string& prefix) {
  std::string out;
  char number[64];
  for (size_t i = 0; i < calls.size(); ++i) {
    const KernelCall& c = calls[i];
    std::snprintf(number, sizeof number, "%zu,%lld,", i, static_cast<long long>(c.depth));
    out += prefix + number + c.op + ",";
    std::snprintf(number, sizeof number, "%.4f,%lld,", c.self_ms, static_cast<long long>(c.bytes_allocated));
    out += number;
    out += "\"" + c.tensors + "\"\n";  // tensors hold commas, never quotes
  }
  return out;
}

void OpProfiler::inspect_before(const char* op, Device /*device*/, KernelTensors args) {
  work_ += kernel_work(op, args);
  if (stack_.empty()) return;
  if (log_calls_) stack_.back().tensors = describe_kernel_tensors(args);
  // The kernel's clock starts after this bookkeeping, which is the
  // profiler's cost, not the kernel's.
  stack_.back().start = std::chrono::steady_clock::now();
}

std::vector<OpStats> OpProfiler::table() const {
  std::vector<OpStats> out;
  for (const auto& [name, s] : stats_) out.push_back(s);
  std::stable_sort(out.begin(), out.end(), [](const OpStats& a, const OpStats& b) { return a.ms > b.ms; });
  return out;
}

double OpProfiler::total_kernel_ms() const {
  double total = 0;
  for (const auto& [name, s] : stats_) total += s.ms;
  return total;
}

int64_t OpProfiler::unattributed_bytes() const { return counting_.allocated() - charged_bytes_; }

bool is_gemm_op(const std::string& op) {
  return op == "matmul" || op == "matmul_bias" || op == "matmul_summed" || op == "linear" ||
         op == "modulated_linear" || op == "modulated_linear_backward";
}

double gemm_ms(const std::vector<OpStats>& table) {
  double ms = 0;
  for (const OpStats& s : table)
    if (is_gemm_op(s.op)) ms += s.ms;
  return ms;
}

std::string format_op_table(const std::vector<OpStats>& table, double step_wall_ms, int64_t unattributed_bytes) {
  double total = 0;
  int64_t bytes = 0;
  for (const OpStats& s : table) {
    total += s.ms;
    bytes += s.bytes_allocated;
  }
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line, "%-22s %8s %11s %7s %12s\n", "op", "calls", "ms", "share", "alloc MiB");
  out += line;
  for (const OpStats& s : table) {
    std::snprintf(line, sizeof line, "%-22s %8lld %11.2f %6.1f%% %12.1f\n", s.op.c_str(),
                  static_cast<long long>(s.calls), s.ms, total > 0 ? 100.0 * s.ms / total : 0.0,
                  static_cast<double>(s.bytes_allocated) / (1 << 20));
    out += line;
  }
  std::snprintf(line, sizeof line, "%-22s %8s %11.2f %6.1f%% %12.1f\n", "total (kernels)", "", total, 100.0,
                static_cast<double>(bytes) / (1 << 20));
  out += line;
  const double gemm = gemm_ms(table);
  std::snprintf(line, sizeof line,
                "GEMM (matmul, matmul_bias, matmul_summed, linear, modulated_linear): %.2f ms = %.1f%% of kernel time; everything else %.2f ms = %.1f%%\n", gemm,
                total > 0 ? 100.0 * gemm / total : 0.0, total - gemm, total > 0 ? 100.0 * (total - gemm) / total : 0.0);
  out += line;
  std::snprintf(line, sizeof line,
                "step wall time %.2f ms: kernels %.1f%%, outside kernels (autograd, allocation, views) %.1f%%; "
                "%.1f MiB allocated after the last kernel\n",
                step_wall_ms, step_wall_ms > 0 ? 100.0 * total / step_wall_ms : 0.0,
                step_wall_ms > 0 ? 100.0 * (step_wall_ms - total) / step_wall_ms : 0.0,
                static_cast<double>(unattributed_bytes) / (1 << 20));
  out += line;
  return out;
}

}  // namespace attn
