// A plain-text kernel trace: while a KernelTrace is alive, every kernel call
// prints one line to its stream when it returns: the kernel's op, its device,
// its tensor arguments (dtype and shape, in argument order: inputs and the
// outputs it writes) and its wall time, and inside a backward pass the
// forward op whose backward ran it. A kernel called from inside another is
// indented one step per level and printed before its caller (it returns
// first). On a CUDA device the time is the launch's, unless the kernel
// synchronises. Any program may install one (`attn graph --trace` does).
#pragma once
#include <chrono>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "attn/engine/kernel_table.h"

namespace attn {

class KernelTrace : public KernelObserver {
 public:
  explicit KernelTrace(std::ostream& out);  // installs itself
  ~KernelTrace() override;                   // restores the previous observer
  KernelTrace(const KernelTrace&) = delete;
  KernelTrace& operator=(const KernelTrace&) = delete;

  void before(const char* op, Device device) override;
  void after(const char* op, Device device) override;
  void inspect_before(const char* op, Device device, KernelTensors args) override;
  void inspect_after(const char* op, Device device, KernelTensors args) override;

  int64_t kernels_traced() const { return traced_; }

 private:
  struct Call {
    std::string arguments;
    const char* backward_of;
    std::chrono::steady_clock::time_point start;
  };
  std::ostream& out_;
  KernelObserver* previous_;
  std::vector<Call> calls_;  // one per kernel running now (a kernel may call another)
  int64_t traced_ = 0;
};

}  // namespace attn
