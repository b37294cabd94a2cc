// The kernel tables list themselves and every call passes the observer hook.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "attn/engine/kernel_table.h"
#include "attn/ops/binary/binary.h"
#include "attn/ops/registry.h"
#include "attn/ops/unary/unary.h"

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

// Every op of an elementwise kernel table has gradcheck samples under its own
// name: an op added to ATTN_UNARY_OPS or ATTN_BINARY_OPS without samples fails here.
TEST(KernelTables, EveryUnaryOpHasGradcheckSamples) {
  for (int i = 0; i < static_cast<int>(UnaryOp::Count); ++i) {
    const char* name = unary_op_name(static_cast<UnaryOp>(i));
    const OpSpec* spec = op_registry().find(name);
    ASSERT_NE(spec, nullptr) << "unary op '" << name << "' has no gradcheck samples (ops/unary/unary_samples.cpp)";
    EXPECT_EQ(spec->family, "unary") << name;
  }
}

TEST(KernelTables, EveryBinaryOpHasGradcheckSamples) {
  for (int i = 0; i < static_cast<int>(BinaryOp::Count); ++i) {
    const char* name = binary_op_name(static_cast<BinaryOp>(i));
    EXPECT_NE(op_registry().find(name), nullptr)
        << "binary op '" << name << "' has no gradcheck samples (ops/binary/binary_samples.cpp)";
  }
}

}  // namespace
}  // namespace attn
