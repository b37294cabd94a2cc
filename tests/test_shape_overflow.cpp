// Element and byte counts that do not fit in 64 bits are errors, never a
// wrapped-round small count (a buffer too small for what is written to it).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>

#include "attn/engine/shape.h"
#include "attn/engine/tensor.h"
#include "test_util.h"

namespace attn {
namespace {

using ::testing::HasSubstr;
using namespace testing_support;

TEST(ShapeOverflow, AnElementCountBeyond64BitsIsAnError) {
  const int64_t huge = int64_t{1} << 62;
  EXPECT_THAT(error_of([&] { numel_of({huge, 4}); }), HasSubstr("has more than 2^63 - 1 elements"));
  EXPECT_THAT(error_of([&] { numel_of({3, huge, 2, 5}); }), HasSubstr("[3, 4611686018427387904, 2, 5]"));
  EXPECT_EQ(numel_of({huge, 1}), huge);
  EXPECT_EQ(numel_of({huge, 4, 0}), 0);  // empty, whatever the other axes
  EXPECT_EQ(numel_of({}), 1);
}

TEST(ShapeOverflow, AByteCountBeyond64BitsIsAnErrorBeforeAnyAllocation) {
  const int64_t elements = (int64_t{1} << 61) + 1;  // fits as a count, not as float64 bytes
  EXPECT_THAT(error_of([&] { empty({elements}, DType::F64); }), HasSubstr("needs more than 2^63 - 1 bytes"));
  EXPECT_THAT(error_of([&] { empty({int64_t{1} << 62, 8}, DType::F32); }), HasSubstr("more than 2^63 - 1 elements"));
}

}  // namespace
}  // namespace attn
