// A small JSON reader (RFC 8259) for safetensors headers and dataset files
// (SNLI/MultiNLI jsonl lines, the SpamAssassin package's message files).
// A key that appears twice in one object is an error. Values are immutable trees;
// objects keep their keys in file order. Errors say what was expected and
// where (line, column and byte offset), so a loader can add the file name.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace attn {

class Json {
 public:
  enum class Type { Null, Bool, Number, String, Array, Object };
  using Object = std::vector<std::pair<std::string, Json>>;
  using Array = std::vector<Json>;

  Json() = default;  // null
  static Json boolean(bool value);
  static Json number(double value);
  static Json string(std::string value);
  static Json array(Array items);
  static Json object(Object members);

  // Parses one complete value (surrounding whitespace allowed). Throws
  // attn::Error "json: <what> at line L, column C (offset O)". Strings are
  // returned as UTF-8 (\uXXXX escapes, surrogate pairs included, are encoded;
  // a lone surrogate is an error). Nesting deeper than 512 levels is an error.
  static Json parse(const std::string& text);

  Type type() const { return type_; }
  bool is_null() const { return type_ == Type::Null; }
  bool is_bool() const { return type_ == Type::Bool; }
  bool is_number() const { return type_ == Type::Number; }
  bool is_string() const { return type_ == Type::String; }
  bool is_array() const { return type_ == Type::Array; }
  bool is_object() const { return type_ == Type::Object; }

  // Typed access; each throws attn::Error naming the actual type on mismatch.
  bool as_bool() const;
  double as_number() const;
  const std::string& as_string() const;
  const Array& as_array() const;
  const Object& as_object() const;

  // Object member by key: nullptr when absent (or when this is not an object).
  const Json* find(const std::string& key) const;
  // Object member by key; throws attn::Error when absent.
  const Json& at(const std::string& key) const;

  // Compact serialisation (numbers with up to 17 significant digits).
  std::string dump() const;

 private:
  Type type_ = Type::Null;
  bool bool_ = false;
  double number_ = 0;
  std::shared_ptr<const std::string> string_;
  std::shared_ptr<const Array> array_;
  std::shared_ptr<const Object> object_;
};

const char* json_type_name(Json::Type type);

// `text` as a JSON string literal, quotes included (control characters escaped).
std::string json_quote(const std::string& text);

}  // namespace attn
