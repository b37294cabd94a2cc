// How fast a training step could be on this machine: the floor that
// docs/benchmarks.md compares each encoder against. A profiled step (OpProfiler)
// counts its work by kind; this machine's rates for each kind are measured
// here; the floor is the sum of work / rate:
//   GEMM FLOPs (matmul, linear) at the engine's own rate on a square float32
//     product (its matmul over all threads: the AVX-512 kernel or OpenBLAS,
//     whichever float32 products go to),
//   the fused attention kernels' per-pair exps (over [batch, queries, keys,
//     features] or the window) at the rate of the engine's vectorised
//     float32 exp over all threads,
//   every other kernel's tensor bytes (inputs read, outputs written, each once)
//     at the measured copy bandwidth.
// It is a floor, not a prediction: it assumes perfect overlap-free reuse and
// ignores the fused kernels' own arithmetic beyond their transcendentals.
#pragma once
#include <cstdint>
#include <string>

#include "attn/engine/kernel_table.h"
#include "attn/engine/tensor.h"

namespace attn {

// Work of one kernel call, by kind.
struct KernelWork {
  double gemm_flops = 0;
  double exps = 0;     // transcendentals of the fused attention kernels
  double bytes = 0;    // tensor bytes of every kernel that is neither of the above
};
KernelWork& operator+=(KernelWork& a, const KernelWork& b);

// The work of a kernel call from its op name and tensor arguments.
KernelWork kernel_work(const char* op, KernelTensors args);

// This machine's rates, measured with the current OpenMP thread count.
struct MachineRates {
  double gemm_gflops = 0;        // float32, 1024^3, the engine's matmul, best of 3
  double exp_gper_s = 0;         // vectorised float32 exp, all threads, best of 5
  double copy_gbytes_s = 0;      // bytes read + written by a parallel 256 MiB copy, best of 3
};
MachineRates measure_machine_rates();

// The GEMM rate of MachineRates (the engine's float32 matmul of 1024^3),
// measured again on demand: a step timed next to its own probe is compared
// with a floor at the machine's speed of that moment, so a change of speed
// between the rates measured at the start and the steps (this project's
// virtual machines swing by up to 2x from one minute to the next) does not
// move the ratio.
class GemmRateProbe {
 public:
  GemmRateProbe();
  double gflops();  // best of two products

 private:
  Tensor a_, b_, c_;
};

struct StepFloor {
  double gemm_ms = 0, transcendental_ms = 0, memory_ms = 0;
  double total_ms() const { return gemm_ms + transcendental_ms + memory_ms; }
};
StepFloor step_floor(const KernelWork& work, const MachineRates& rates);

// "rates: ..." and "floor: ..." lines for the profile report. The floor line
// gives the distance of the profiled step (step_ms, one sample with the
// profiler's own cost) and of the median of `steps` unprofiled ones.
std::string format_rates(const MachineRates& rates);
std::string format_floor(const KernelWork& work, const StepFloor& floor, double step_ms, double median_ms,
                         int64_t steps);

}  // namespace attn
