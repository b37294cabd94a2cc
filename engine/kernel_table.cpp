#include "engine/kernel_table.h"

#include <atomic>

namespace attn {

namespace {
std::vector<KernelTableInfo>& table_list() {
  static std::vector<KernelTableInfo> tables;  // filled during static initialisation
  return tables;
}
std::atomic<KernelObserver*> g_observer{nullptr};
}  // namespace

const std::vector<KernelTableInfo>& kernel_tables() { return table_list(); }
void register_kernel_table(KernelTableInfo info) { table_list().push_back(info); }

KernelObserver* kernel_observer() { return g_observer.load(std::memory_order_relaxed); }
KernelObserver* set_kernel_observer(KernelObserver* observer) { return g_observer.exchange(observer); }

}  // namespace attn
