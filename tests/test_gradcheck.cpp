// One parameterised test over the op registry: full-Jacobian gradcheck in
// float64 and a determinism check of every op's backward.
#include <gtest/gtest.h>

#include "attn/ops/gradcheck.h"
#include "attn/ops/registry.h"

namespace attn {
namespace {

std::vector<std::string> registered_names() {
  std::vector<std::string> names;
  for (const OpSpec& s : op_registry().all()) names.push_back(s.name);
  return names;
}

class OpGradcheck : public ::testing::TestWithParam<std::string> {
 protected:
  const OpSpec& spec() const { return *op_registry().find(GetParam()); }
};

TEST_P(OpGradcheck, JacobianMatchesCentralDifferences) {
  OpResult r = gradcheck_op(spec());
  ASSERT_FALSE(r.cases.empty()) << "op '" << r.name << "' is registered without samples";
  for (const CaseResult& c : r.cases)
    EXPECT_TRUE(c.passed) << r.name << " [" << c.label << "]: " << c.failure << " (max abs error " << c.max_abs_error
                          << ")";
}

TEST_P(OpGradcheck, BackwardIsDeterministicOnFreshGraphs) {
  std::vector<OpCase> cases = spec().cases();
  ASSERT_FALSE(cases.empty()) << "op '" << spec().name << "' is registered without samples";
  for (const OpCase& c : cases) EXPECT_EQ(backward_determinism_failure(c), "") << spec().name << " [" << c.label << "]";
}

INSTANTIATE_TEST_SUITE_P(Registry, OpGradcheck, ::testing::ValuesIn(registered_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

TEST(OpRegistry, CoversAtLeastFortyOpsWithTenOnBroadcastOrStridedInputs) {
  int broadcast_or_strided = 0;
  for (const OpSpec& s : op_registry().all()) {
    OpResult r = gradcheck_op(s);
    if (r.broadcast_or_strided) ++broadcast_or_strided;
  }
  EXPECT_GE(op_registry().all().size(), 40u);
  EXPECT_GE(broadcast_or_strided, 10);
}

}  // namespace
}  // namespace attn
