// The kernel tables list themselves and every call passes the observer hook.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "engine/kernel_table.h"
#include "ops/binary.h"
#include "ops/unary.h"

namespace attn {
namespace {

TEST(KernelTables, ListIncludesTheOpFamiliesWithCpuKernels) {
  std::set<std::string> names;
  for (const KernelTableInfo& t : kernel_tables()) {
    names.insert(t.op);
    EXPECT_TRUE(t.has_cpu) << t.op << " has no CPU kernel";
  }
  for (const char* op : {"binary", "softmax", "matmul", "layer_norm", "cross_entropy", "embedding", "dropout"})
    EXPECT_TRUE(names.count(op)) << op << " is not in kernel_tables()";
}

struct CountingObserver : KernelObserver {
  int before_calls = 0, after_calls = 0;
  std::string last;
  void before(const char* op, Device) override {
    ++before_calls;
    last = op;
  }
  void after(const char*, Device) override { ++after_calls; }
};

TEST(KernelTables, ObserverSeesEveryCallAndCanBeRemoved) {
  CountingObserver counter;
  KernelObserver* previous = set_kernel_observer(&counter);
  Tensor x = ones({2, 3}, DType::F64);
  Tensor y = add(x, x);
  set_kernel_observer(previous);
  EXPECT_EQ(counter.before_calls, counter.after_calls);
  EXPECT_GE(counter.before_calls, 1);
  EXPECT_EQ(counter.last, "binary");
  const int seen = counter.before_calls;
  add(y, x);
  EXPECT_EQ(counter.before_calls, seen);  // no longer installed
}

}  // namespace
}  // namespace attn
