// The name tables behind every *_from_name / *_name pair: aliases, the name
// a value is printed with, and the error that lists the choices.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "attn/models/masks.h"
#include "attn/nn/activation.h"
#include "attn/util/named_values.h"
#include "attn/util/task_kind.h"
#include "test_util.h"

namespace attn {
namespace {

using ::testing::HasSubstr;
using testing_support::error_of;

enum class Fruit { Apple, Pear, Plum };

const NamedValue<Fruit> kFruitNames[] = {{Fruit::Apple, "apple"}, {Fruit::Pear, "pear"}, {Fruit::Apple, "malus"}};

TEST(NamedValues, EveryNameAndAliasReadsAsItsValue) {
  EXPECT_EQ(value_from_name(kFruitNames, "apple", "fruit", "fruit"), Fruit::Apple);
  EXPECT_EQ(value_from_name(kFruitNames, "pear", "fruit", "fruit"), Fruit::Pear);
  EXPECT_EQ(value_from_name(kFruitNames, "malus", "fruit", "fruit"), Fruit::Apple);
}

TEST(NamedValues, AValueIsPrintedWithItsFirstName) {
  EXPECT_STREQ(name_of_value(kFruitNames, Fruit::Apple), "apple");
  EXPECT_STREQ(name_of_value(kFruitNames, Fruit::Pear), "pear");
  EXPECT_STREQ(name_of_value(kFruitNames, Fruit::Plum), "?");  // no row
}

TEST(NamedValues, AnUnknownNameListsTheChoicesWithoutAliases) {
  const std::string message = error_of([] { value_from_name(kFruitNames, "Apple", "orchard", "fruit"); });
  EXPECT_THAT(message, HasSubstr("orchard: unknown fruit 'Apple' (known: apple, pear)"));
}

// The tables of the library: each name reads back as the value that prints as it.
TEST(NamedValues, LibraryTablesRoundTrip) {
  for (Activation a : {Activation::Relu, Activation::Elu, Activation::Tanh, Activation::Sigmoid, Activation::None})
    EXPECT_EQ(activation_from_name(activation_name(a)), a);
  for (TaskKind t : {TaskKind::Classify, TaskKind::Pair, TaskKind::Relatedness, TaskKind::Tag})
    EXPECT_EQ(task_from_name(task_name(t)), t);
  for (Direction d : {Direction::Forward, Direction::Backward, Direction::None})
    EXPECT_EQ(direction_from_name(direction_name(d)), d);
  EXPECT_EQ(activation_from_name("linear"), Activation::None);
  EXPECT_EQ(direction_from_name("bw"), Direction::Backward);
  EXPECT_THAT(error_of([] { activation_from_name("gelu"); }),
              HasSubstr("activation: unknown activation 'gelu' (known: relu, elu, tanh, sigmoid, identity)"));
  EXPECT_THAT(error_of([] { direction_from_name("up"); }),
              HasSubstr("direction: unknown direction 'up' (known: forward, backward, none)"));
}

}  // namespace
}  // namespace attn
