// User errors are exceptions whose message names the op and the shapes.
#include <gtest/gtest.h>

#include "test_util.h"
#include "attn/engine/error.h"
#include "attn/ops/binary/binary.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/ops/view/view.h"

namespace attn {
namespace {

using namespace testing_support;

TEST(Errors, BroadcastMismatchNamesOpAndBothShapes) {
  Tensor a = zeros({2, 3});
  Tensor b = zeros({4});
  std::string m = error_of([&] { add(a, b); });
  EXPECT_NE(m.find("add"), std::string::npos) << m;
  EXPECT_NE(m.find("[2, 3]"), std::string::npos) << m;
  EXPECT_NE(m.find("[4]"), std::string::npos) << m;
}

TEST(Errors, DtypeMismatchNamesBothDtypes) {
  std::string m = error_of([] { mul(zeros({2}, DType::F32), zeros({2}, DType::F64)); });
  EXPECT_NE(m.find("mul"), std::string::npos) << m;
  EXPECT_NE(m.find("float32"), std::string::npos) << m;
  EXPECT_NE(m.find("float64"), std::string::npos) << m;
}

TEST(Errors, AxisOutOfRange) {
  std::string m = error_of([] { sum(zeros({2, 3}), {2}); });
  EXPECT_NE(m.find("sum"), std::string::npos) << m;
  EXPECT_NE(m.find("axis 2"), std::string::npos) << m;
}

TEST(Errors, ReshapeToWrongSize) {
  std::string m = error_of([] { reshape(zeros({2, 3}), {4, 2}); });
  EXPECT_NE(m.find("reshape"), std::string::npos) << m;
  EXPECT_NE(m.find("[2, 3]"), std::string::npos) << m;
  EXPECT_NE(m.find("[4, 2]"), std::string::npos) << m;
}

TEST(Errors, ExpandIncompatible) {
  std::string m = error_of([] { expand(zeros({3}), {2, 4}); });
  EXPECT_NE(m.find("expand"), std::string::npos) << m;
}

TEST(Errors, NarrowOutOfRange) {
  std::string m = error_of([] { narrow(zeros({5}), 0, 3, 4); });
  EXPECT_NE(m.find("narrow"), std::string::npos) << m;
  EXPECT_NE(m.find("[5]"), std::string::npos) << m;
}

TEST(Errors, WhereNeedsAUint8Condition) {
  std::string m = error_of([] { where(zeros({2}), zeros({2}), zeros({2})); });
  EXPECT_NE(m.find("where"), std::string::npos) << m;
  EXPECT_NE(m.find("uint8"), std::string::npos) << m;
}

}  // namespace
}  // namespace attn
