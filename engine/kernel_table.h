// Dispatch is a table, not scattered ifs: each op family declares one
// DeviceKernels per kernel, with a slot per device. An empty slot throws
// NotImplemented naming the op and the device; adding the CUDA backend fills
// the CUDA slots and changes no call site.
//
// Every table lists itself (kernel_tables()), so a test can prove that a CUDA
// build has no empty CUDA slot, and every call goes through operator(), where
// a profiler can observe it (KernelObserver).
#pragma once
#include <utility>
#include <vector>

#include "engine/device.h"
#include "engine/error.h"

namespace attn {

// What the table of one kernel offers, recorded when the table is built.
struct KernelTableInfo {
  const char* op;
  bool has_cpu;
  bool has_cuda;
};

// Every DeviceKernels table of the program (those linked in).
const std::vector<KernelTableInfo>& kernel_tables();
void register_kernel_table(KernelTableInfo info);

// Told before and after every kernel call; installed by a profiler.
class KernelObserver {
 public:
  virtual ~KernelObserver() = default;
  virtual void before(const char* op, Device device) = 0;
  virtual void after(const char* op, Device device) = 0;
};

// The installed observer, or null (the default: no cost beyond one load).
KernelObserver* kernel_observer();
// Installs `observer` (null removes it); returns the previous one.
KernelObserver* set_kernel_observer(KernelObserver* observer);

// Notifies the observer around one kernel call, even when the kernel throws.
class KernelCallScope {
 public:
  KernelCallScope(const char* op, Device device) : op_(op), device_(device), observer_(kernel_observer()) {
    if (observer_) observer_->before(op_, device_);
  }
  ~KernelCallScope() {
    if (observer_) observer_->after(op_, device_);
  }
  KernelCallScope(const KernelCallScope&) = delete;
  KernelCallScope& operator=(const KernelCallScope&) = delete;

 private:
  const char* op_;
  Device device_;
  KernelObserver* observer_;
};

class Tensor;

// Every tensor a kernel is handed must live on the kernel's device: a CPU
// tensor meeting a CUDA tensor in one op is an attn::Error naming the op and
// both devices, raised here (the one place every kernel call passes) even
// where an op's own checks missed it. Undefined tensors pass.
void check_kernel_device(const char* op, Device device, const Tensor& t);
template <class Arg>
void check_kernel_device(const char*, Device, const Arg&) {}

template <class Fn>
struct DeviceKernels {
  const char* op;
  Fn cpu = nullptr;
  Fn cuda = nullptr;

  DeviceKernels(const char* op_name, Fn cpu_kernel, Fn cuda_kernel) : op(op_name), cpu(cpu_kernel), cuda(cuda_kernel) {
    register_kernel_table({op, cpu != nullptr, cuda != nullptr});
  }

  Fn get(Device device) const {
    Fn f = device == Device::CPU ? cpu : cuda;
    if (!f) throw NotImplemented(op, device);
    return f;
  }
  bool has(Device device) const { return (device == Device::CPU ? cpu : cuda) != nullptr; }

  // Runs the kernel of `device` on `args`.
  template <class... Args>
  decltype(auto) operator()(Device device, Args&&... args) const {
    Fn f = get(device);
    (check_kernel_device(op, device, args), ...);
    KernelCallScope scope(op, device);
    return f(std::forward<Args>(args)...);
  }
};

}  // namespace attn

// Names a CUDA kernel in a table, or leaves the slot empty in a CPU-only build.
#ifdef ATTN_WITH_CUDA
#define ATTN_CUDA_KERNEL(fn) fn
#else
#define ATTN_CUDA_KERNEL(fn) nullptr
#endif
