#include "attn/engine/kernel_table.h"

#include <atomic>

#include "attn/engine/tensor.h"

namespace attn {

namespace {
std::vector<KernelTableInfo>& table_list() {
  static std::vector<KernelTableInfo> tables;  // filled during static initialisation
  return tables;
}
std::atomic<KernelObserver*> g_observer{nullptr};
}  // namespace

void check_kernel_device(const char* op, Device device, const Tensor& t) {
  if (!t.defined() || t.device() == device) return;
  throw Error(std::string(op) + ": expected every tensor on " + device_name(device) + ", but one of shape " +
              shape_str(t.shape()) + " is on " + device_name(t.device()) + " (move it with .to(Device::" +
              (device == Device::CPU ? "CPU" : "CUDA") + "))");
}

const std::vector<KernelTableInfo>& kernel_tables() { return table_list(); }
void register_kernel_table(KernelTableInfo info) { table_list().push_back(info); }

KernelObserver* kernel_observer() { return g_observer.load(std::memory_order_relaxed); }
KernelObserver* set_kernel_observer(KernelObserver* observer) { return g_observer.exchange(observer); }

}  // namespace attn
