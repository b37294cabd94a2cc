// The JSON reader: values, escapes (\uXXXX and surrogate pairs), numbers,
// nesting, and errors that give the position.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "attn/engine/error.h"
#include "attn/util/json.h"
#include "test_data_util.h"

namespace attn {
namespace {

using namespace test_data;

TEST(DataJson, Scalars) {
  EXPECT_TRUE(Json::parse("null").is_null());
  EXPECT_TRUE(Json::parse(" true ").as_bool());
  EXPECT_FALSE(Json::parse("false").as_bool());
  EXPECT_EQ(Json::parse("\"hi\"").as_string(), "hi");
  EXPECT_EQ(Json::parse("0").as_number(), 0.0);
  EXPECT_EQ(Json::parse("-12").as_number(), -12.0);
  EXPECT_EQ(Json::parse("3.25").as_number(), 3.25);
  EXPECT_EQ(Json::parse("1e3").as_number(), 1000.0);
  EXPECT_EQ(Json::parse("-2.5E-2").as_number(), -0.025);
  EXPECT_EQ(Json::parse("1E+2").as_number(), 100.0);
}

TEST(DataJson, StringEscapes) {
  EXPECT_EQ(Json::parse(R"("a\"b\\c\/d\b\f\n\r\t")").as_string(), "a\"b\\c/d\b\f\n\r\t");
  EXPECT_EQ(Json::parse(R"("\u0041\u00e9")").as_string(), "A\xc3\xa9");           // A, e-acute
  EXPECT_EQ(Json::parse(R"("\u20AC")").as_string(), "\xe2\x82\xac");              // euro sign
  EXPECT_EQ(Json::parse(R"("\ud83d\ude00")").as_string(), "\xf0\x9f\x98\x80");    // surrogate pair
  EXPECT_EQ(Json::parse("\"caf\xc3\xa9\"").as_string(), "caf\xc3\xa9");          // raw UTF-8 passes through
}

TEST(DataJson, NestedObjectsAndArrays) {
  Json v = Json::parse(R"({"id": "00001", "checksum": {"type": "MD5", "value": "ab"},
                           "list": [1, [2, 3], {"k": null}], "empty": {}, "none": []})");
  ASSERT_TRUE(v.is_object());
  EXPECT_EQ(v.as_object().size(), 5u);
  EXPECT_EQ(v.as_object()[0].first, "id");  // file order kept
  EXPECT_EQ(v.at("checksum").at("value").as_string(), "ab");
  const Json::Array& list = v.at("list").as_array();
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list[0].as_number(), 1.0);
  EXPECT_EQ(list[1].as_array()[1].as_number(), 3.0);
  EXPECT_TRUE(list[2].at("k").is_null());
  EXPECT_TRUE(v.at("empty").as_object().empty());
  EXPECT_TRUE(v.at("none").as_array().empty());
  EXPECT_EQ(v.find("missing"), nullptr);
  EXPECT_THAT(error_of([&] { v.at("missing"); }), HasSubstr("missing key \"missing\""));
  EXPECT_THAT(error_of([&] { v.at("id").as_number(); }), HasSubstr("expected a number, found string"));
}

TEST(DataJson, DumpRoundTrip) {
  std::string text = R"({"a":[1,2.5,"x\ny",true,null],"b":{"c":"\u0001"}})";
  Json v = Json::parse(text);
  EXPECT_EQ(v.dump(), text);
  EXPECT_EQ(Json::parse(v.dump()).dump(), text);
}

TEST(DataJson, ErrorsGivePosition) {
  EXPECT_THAT(error_of([] { Json::parse("{\"a\": 1,\n  \"b\" 2}"); }),
              HasSubstr("expected ':' after an object key at line 2, column 7"));
  EXPECT_THAT(error_of([] { Json::parse("[1, 2"); }), HasSubstr("expected ',' or ']' in an array at line 1, column 6"));
  EXPECT_THAT(error_of([] { Json::parse("\"abc"); }), HasSubstr("unterminated string at line 1, column 1"));
  EXPECT_THAT(error_of([] { Json::parse("01"); }), HasSubstr("unexpected text after the value at line 1, column 2"));
  EXPECT_THAT(error_of([] { Json::parse("1."); }), HasSubstr("expected a digit after '.'"));
  EXPECT_THAT(error_of([] { Json::parse("-"); }), HasSubstr("invalid number"));
  EXPECT_THAT(error_of([] { Json::parse("tru"); }), HasSubstr("invalid literal"));
  EXPECT_THAT(error_of([] { Json::parse("\"\\x\""); }), HasSubstr("invalid escape '\\x' at line 1, column 2"));
  EXPECT_THAT(error_of([] { Json::parse("\"\\u12G4\""); }), HasSubstr("invalid hex digit"));
  EXPECT_THAT(error_of([] { Json::parse("\"\\udc00\""); }), HasSubstr("lone low surrogate"));
  EXPECT_THAT(error_of([] { Json::parse("\"\\ud800x\""); }), HasSubstr("high surrogate not followed"));
  EXPECT_THAT(error_of([] { Json::parse("\"a\nb\""); }), HasSubstr("unescaped control character"));
  EXPECT_THAT(error_of([] { Json::parse(""); }), HasSubstr("unexpected end of input"));
  EXPECT_THAT(error_of([] { Json::parse("{\"a\":1,}"); }), HasSubstr("expected a string key"));
  EXPECT_THAT(error_of([] { Json::parse(std::string(600, '[')); }), HasSubstr("nesting deeper than 512"));
}

TEST(DataJson, DuplicateKeysAreRejectedAtTheSecondOne) {
  EXPECT_THAT(error_of([] { Json::parse(R"({"a": 1, "b": {"a": 2}, "a": 3})"); }),
              HasSubstr("key 'a' appears twice in an object at line 1, column 25"));
  EXPECT_EQ(Json::parse(R"({"a": {"a": 1}})").at("a").at("a").as_number(), 1);  // nesting is not a repeat
}

}  // namespace
}  // namespace attn
