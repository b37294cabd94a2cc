// Time and bytes by kernel op. While an OpProfiler is alive it is the kernel
// observer (engine/kernel_table.h): every DeviceKernels call is timed and
// accumulated under the table's op name ("matmul", "linear", "softmax", ...),
// and the device's allocator is wrapped so that the bytes allocated since the
// previous kernel finished (an op allocates its outputs just before its
// kernel runs) are charged to the kernel that finishes next. Nested kernel
// calls are charged their own time only (self time).
//
// On CUDA every observed call is synchronised before and after, so times are
// the kernels' own (and the step is slower than unprofiled).
// One profiler at a time, on the thread that dispatches kernels (the kernels'
// own OpenMP/BLAS threads are inside the timed calls).
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "attn/engine/allocator.h"
#include "attn/engine/kernel_table.h"
#include "attn/train/bench/step_floor.h"

namespace attn {

// One kernel call of a profiled step, in call order (OpProfiler::log_calls).
struct KernelCall {
  std::string op;
  int64_t depth = 0;           // 0: called by the model; 1 and more: from inside another kernel
  double self_ms = 0;          // as OpStats::ms
  int64_t bytes_allocated = 0;
  std::string tensors;         // each Tensor argument: dtype, shape, strides when not contiguous
};

// "float32 [64, 64, 300]; uint8 [64, 64, 300] strides [64, 1, 0]; -" for a call's
// Tensor arguments (outputs included), "-" for an undefined one.
std::string describe_kernel_tensors(KernelTensors args);

// The call log as CSV rows (no header), each prefixed by `prefix` fields.
std::string kernel_calls_csv(const std::vector<KernelCall>& calls, const std::string& prefix);

struct OpStats {
  std::string op;
  int64_t calls = 0;
  double ms = 0;                  // self time of the kernel calls
  int64_t bytes_allocated = 0;    // allocator bytes charged to these calls
};

class OpProfiler : public KernelObserver {
 public:
  explicit OpProfiler(Device device = Device::CPU);
  ~OpProfiler() override;
  OpProfiler(const OpProfiler&) = delete;
  OpProfiler& operator=(const OpProfiler&) = delete;

  void before(const char* op, Device device) override;
  void after(const char* op, Device device) override;
  void inspect_before(const char* op, Device device, KernelTensors args) override;

  // Per op, most time first.
  std::vector<OpStats> table() const;
  double total_kernel_ms() const;
  // Bytes allocated after the last kernel call (not charged to any op).
  int64_t unattributed_bytes() const;
  // The observed calls' work by kind (step_floor.h).
  const KernelWork& work() const { return work_; }
  // Also keep every call, with its arguments' shapes (attn bench --trace).
  void log_calls(bool on) { log_calls_ = on; }
  const std::vector<KernelCall>& calls() const { return calls_; }

 private:
  // Forwards to the device's allocator and counts every byte handed out.
  class CountingAllocator : public Allocator {
   public:
    explicit CountingAllocator(Allocator& inner) : inner_(inner) {}
    void* allocate(size_t bytes) override {
      void* p = inner_.allocate(bytes);
      allocated_.fetch_add(static_cast<int64_t>(bytes), std::memory_order_relaxed);
      return p;
    }
    void deallocate(void* ptr, size_t bytes) override { inner_.deallocate(ptr, bytes); }
    int64_t allocated() const { return allocated_.load(std::memory_order_relaxed); }

   private:
    Allocator& inner_;
    std::atomic<int64_t> allocated_{0};
  };

  struct Frame {
    const char* op;
    std::chrono::steady_clock::time_point start;
    double child_ms = 0;
    int64_t bytes = 0;  // allocated while this frame was the innermost call (and, top level, just before it)
    std::string tensors;  // with log_calls only
  };

  Device device_;
  Allocator& inner_;
  CountingAllocator counting_;
  KernelObserver* previous_observer_;
  std::vector<Frame> stack_;
  std::map<std::string, OpStats> stats_;
  int64_t charged_bytes_ = 0;  // allocated bytes already charged to some op
  KernelWork work_;
  bool log_calls_ = false;
  std::vector<KernelCall> calls_;
};

// Milliseconds spent in the GEMM ops (is_gemm_op: "matmul", "matmul_bias", "matmul_summed", "linear" and the modulated linear ones).
double gemm_ms(const std::vector<OpStats>& table);
bool is_gemm_op(const std::string& op);

// A printable table: op, calls, ms, share of kernel time, MiB allocated;
// then the GEMM total against everything else and against the step's wall time.
std::string format_op_table(const std::vector<OpStats>& table, double step_wall_ms, int64_t unattributed_bytes);

}  // namespace attn
