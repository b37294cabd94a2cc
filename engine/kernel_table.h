// Dispatch is a table, not scattered ifs: each op family declares one
// DeviceKernels per kernel, with a slot per device. An empty slot throws
// NotImplemented naming the op and the device; adding the CUDA backend fills
// the CUDA slots and changes no call site.
//
// Every table lists itself (kernel_tables()), so a test can prove that a CUDA
// build has no empty CUDA slot, and every call goes through operator(), where
// a profiler can observe it (KernelObserver).
#pragma once
#include <cstddef>
#include <type_traits>
#include <utility>
#include <vector>

#include "attn/engine/device.h"
#include "attn/engine/error.h"

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

class Tensor;

// The arguments of one kernel call, in order: a pointer for each Tensor
// argument, null for every other one (op codes, scalars). Kernels write their
// results into Tensor arguments, so an observer sees inputs and outputs here.
struct KernelTensors {
  const Tensor* const* items;
  size_t size;
};

// Told before and after every kernel call; installed by a profiler or by
// anomaly detection (engine/anomaly.h).
class KernelObserver {
 public:
  virtual ~KernelObserver() = default;
  virtual void before(const char* op, Device device) = 0;
  virtual void after(const char* op, Device device) = 0;
  // Observers that look at the data override these. `inspect_after` runs
  // only when the kernel returned normally and may throw to stop the caller.
  virtual void inspect_before(const char* /*op*/, Device /*device*/, KernelTensors /*args*/) {}
  virtual void inspect_after(const char* /*op*/, Device /*device*/, KernelTensors /*args*/) {}
};

// The installed observer, or null (the default: no cost beyond one load).
KernelObserver* kernel_observer();
// Installs `observer` (null removes it); returns the previous one.
KernelObserver* set_kernel_observer(KernelObserver* observer);

// Notifies the observer around one kernel call, even when the kernel throws.
class KernelCallScope {
 public:
  KernelCallScope(const char* op, Device device) : KernelCallScope(op, device, kernel_observer()) {}
  KernelCallScope(const char* op, Device device, KernelObserver* observer)
      : op_(op), device_(device), observer_(observer) {
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

// Every tensor a kernel is handed must live on the kernel's device: a CPU
// tensor meeting a CUDA tensor in one op is an attn::Error naming the op and
// both devices, raised here (the one place every kernel call passes) even
// where an op's own checks missed it. Undefined tensors pass.
void check_kernel_device(const char* op, Device device, const Tensor& t);
template <class Arg>
void check_kernel_device(const char*, Device, const Arg&) {}

// The address of a Tensor argument, null for any other argument.
inline const Tensor* kernel_tensor_arg(const Tensor& t) { return &t; }
template <class Arg>
const Tensor* kernel_tensor_arg(const Arg&) {
  return nullptr;
}

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
    KernelObserver* observer = kernel_observer();
    if (observer == nullptr) return f(std::forward<Args>(args)...);  // the common case costs one load
    const Tensor* tensors[] = {kernel_tensor_arg(args)..., nullptr};
    const KernelTensors view{tensors, sizeof...(Args)};
    KernelCallScope scope(op, device, observer);
    observer->inspect_before(op, device, view);
    if constexpr (std::is_void_v<decltype(f(std::forward<Args>(args)...))>) {
      f(std::forward<Args>(args)...);
      observer->inspect_after(op, device, view);
    } else {
      auto result = f(std::forward<Args>(args)...);
      observer->inspect_after(op, device, view);
      return result;
    }
  }
};

}  // namespace attn

// Names a CUDA kernel in a table, or leaves the slot empty in a CPU-only build.
#ifdef ATTN_WITH_CUDA
#define ATTN_CUDA_KERNEL(fn) fn
#else
#define ATTN_CUDA_KERNEL(fn) nullptr
#endif
