#include "attn/util/json.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unordered_set>

#include "attn/util/error.h"
#include "attn/util/text.h"

namespace attn {

namespace {

constexpr int kMaxDepth = 512;

class Parser {
 public:
  explicit Parser(const std::string& text) : s_(text) {}

  Json parse_document() {
    skip_space();
    Json v = parse_value(0);
    skip_space();
    if (pos_ != s_.size()) fail("unexpected text after the value");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what, size_t at) const {
    size_t line = 1, column = 1;
    for (size_t i = 0; i < at && i < s_.size(); ++i) {
      if (s_[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    throw Error("json: " + what + " at line " + std::to_string(line) + ", column " + std::to_string(column) +
                " (offset " + std::to_string(at) + ")");
  }
  [[noreturn]] void fail(const std::string& what) const { fail(what, pos_); }

  bool at_end() const { return pos_ >= s_.size(); }
  char peek() const { return at_end() ? '\0' : s_[pos_]; }

  void skip_space() {
    while (!at_end() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) ++pos_;
  }

  void expect_literal(const char* word) {
    size_t n = std::strlen(word);
    if (s_.compare(pos_, n, word) != 0) fail(std::string("invalid literal (expected '") + word + "')");
    pos_ += n;
  }

  Json parse_value(int depth) {
    if (at_end()) fail("unexpected end of input (expected a value)");
    char c = s_[pos_];
    switch (c) {
      case '{': return parse_object(depth + 1);
      case '[': return parse_array(depth + 1);
      case '"': return Json::string(parse_string());
      case 't': expect_literal("true"); return Json::boolean(true);
      case 'f': expect_literal("false"); return Json::boolean(false);
      case 'n': expect_literal("null"); return Json();
      default:
        if (c == '-' || (c >= '0' && c <= '9')) return Json::number(parse_number());
        fail(std::string("unexpected character '") + printable(c) + "' (expected a value)");
    }
  }

  static std::string printable(char c) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f) return std::string(1, c);
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\x%02x", u);
    return buf;
  }

  Json parse_object(int depth) {
    if (depth > kMaxDepth) fail("nesting deeper than " + std::to_string(kMaxDepth) + " levels");
    ++pos_;  // '{'
    Json::Object members;
    // Keys seen so far, for the duplicate check: a scan for small objects, a
    // hash set once an object grows, so a header of a million keys stays linear.
    std::unordered_set<std::string> seen;
    constexpr size_t kScanLimit = 16;
    skip_space();
    if (peek() == '}') {
      ++pos_;
      return Json::object(std::move(members));
    }
    for (;;) {
      skip_space();
      if (peek() != '"') fail("expected a string key");
      const size_t key_at = pos_;
      std::string key = parse_string();
      bool duplicate = false;
      if (members.size() < kScanLimit) {
        for (const auto& member : members) duplicate = duplicate || member.first == key;
      } else {
        if (seen.empty())
          for (const auto& member : members) seen.insert(member.first);
        duplicate = !seen.insert(key).second;
      }
      if (duplicate) fail("key '" + key + "' appears twice in an object", key_at);
      skip_space();
      if (peek() != ':') fail("expected ':' after an object key");
      ++pos_;
      skip_space();
      members.emplace_back(std::move(key), parse_value(depth));
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() == '}') {
        ++pos_;
        return Json::object(std::move(members));
      }
      fail("expected ',' or '}' in an object");
    }
  }

  Json parse_array(int depth) {
    if (depth > kMaxDepth) fail("nesting deeper than " + std::to_string(kMaxDepth) + " levels");
    ++pos_;  // '['
    Json::Array items;
    skip_space();
    if (peek() == ']') {
      ++pos_;
      return Json::array(std::move(items));
    }
    for (;;) {
      skip_space();
      items.push_back(parse_value(depth));
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() == ']') {
        ++pos_;
        return Json::array(std::move(items));
      }
      fail("expected ',' or ']' in an array");
    }
  }

  double parse_number() {
    size_t start = pos_;
    if (peek() == '-') ++pos_;
    if (peek() == '0') {
      ++pos_;
    } else if (peek() >= '1' && peek() <= '9') {
      while (peek() >= '0' && peek() <= '9') ++pos_;
    } else {
      fail("invalid number (expected a digit)");
    }
    if (peek() == '.') {
      ++pos_;
      if (!(peek() >= '0' && peek() <= '9')) fail("invalid number (expected a digit after '.')");
      while (peek() >= '0' && peek() <= '9') ++pos_;
    }
    if (peek() == 'e' || peek() == 'E') {
      ++pos_;
      if (peek() == '+' || peek() == '-') ++pos_;
      if (!(peek() >= '0' && peek() <= '9')) fail("invalid number (expected a digit in the exponent)");
      while (peek() >= '0' && peek() <= '9') ++pos_;
    }
    // The grammar was checked above, so strtod reads exactly this span.
    std::string digits = s_.substr(start, pos_ - start);
    return std::strtod(digits.c_str(), nullptr);
  }

  unsigned read_hex4() {
    if (pos_ + 4 > s_.size()) fail("truncated \\u escape");
    unsigned v = 0;
    for (int i = 0; i < 4; ++i) {
      char c = s_[pos_ + i];
      v <<= 4;
      if (c >= '0' && c <= '9') v |= static_cast<unsigned>(c - '0');
      else if (c >= 'a' && c <= 'f') v |= static_cast<unsigned>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') v |= static_cast<unsigned>(c - 'A' + 10);
      else fail("invalid hex digit in \\u escape", pos_ + i);
    }
    pos_ += 4;
    return v;
  }

  std::string parse_string() {
    size_t open = pos_;
    ++pos_;  // '"'
    std::string out;
    for (;;) {
      if (at_end()) fail("unterminated string", open);
      // Copy the plain run in one go: message bodies are long.
      size_t run = pos_;
      while (run < s_.size() && s_[run] != '"' && s_[run] != '\\' && static_cast<unsigned char>(s_[run]) >= 0x20) ++run;
      out.append(s_, pos_, run - pos_);
      pos_ = run;
      if (at_end()) fail("unterminated string", open);
      char c = s_[pos_];
      if (c == '"') {
        ++pos_;
        return out;
      }
      if (c != '\\') fail("unescaped control character in a string");
      ++pos_;
      if (at_end()) fail("unterminated string", open);
      char e = s_[pos_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          size_t escape_at = pos_ - 2;
          unsigned cp = read_hex4();
          if (cp >= 0xDC00 && cp <= 0xDFFF) fail("lone low surrogate in \\u escape", escape_at);
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (s_.compare(pos_, 2, "\\u") != 0) fail("high surrogate not followed by a low surrogate", escape_at);
            pos_ += 2;
            unsigned low = read_hex4();
            if (low < 0xDC00 || low > 0xDFFF) fail("high surrogate not followed by a low surrogate", escape_at);
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          }
          text::append_utf8(out, cp);
          break;
        }
        default: fail(std::string("invalid escape '\\") + printable(e) + "'", pos_ - 2);
      }
    }
  }

  const std::string& s_;
  size_t pos_ = 0;
};

void dump_to(const Json& v, std::string& out) {
  switch (v.type()) {
    case Json::Type::Null: out += "null"; break;
    case Json::Type::Bool: out += v.as_bool() ? "true" : "false"; break;
    case Json::Type::Number: {
      double d = v.as_number();
      if (!std::isfinite(d)) {
        out += "null";  // JSON has no inf/nan
        break;
      }
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.17g", d);
      out += buf;
      break;
    }
    case Json::Type::String: out += json_quote(v.as_string()); break;
    case Json::Type::Array: {
      out += '[';
      bool first = true;
      for (const Json& item : v.as_array()) {
        if (!first) out += ',';
        first = false;
        dump_to(item, out);
      }
      out += ']';
      break;
    }
    case Json::Type::Object: {
      out += '{';
      bool first = true;
      for (const auto& [key, value] : v.as_object()) {
        if (!first) out += ',';
        first = false;
        out += json_quote(key);
        out += ':';
        dump_to(value, out);
      }
      out += '}';
      break;
    }
  }
}

[[noreturn]] void type_mismatch(const char* wanted, Json::Type actual) {
  throw Error(std::string("json: expected ") + wanted + ", found " + json_type_name(actual));
}

}  // namespace

Json Json::boolean(bool value) {
  Json j;
  j.type_ = Type::Bool;
  j.bool_ = value;
  return j;
}

Json Json::number(double value) {
  Json j;
  j.type_ = Type::Number;
  j.number_ = value;
  return j;
}

Json Json::string(std::string value) {
  Json j;
  j.type_ = Type::String;
  j.string_ = std::make_shared<const std::string>(std::move(value));
  return j;
}

Json Json::array(Array items) {
  Json j;
  j.type_ = Type::Array;
  j.array_ = std::make_shared<const Array>(std::move(items));
  return j;
}

Json Json::object(Object members) {
  Json j;
  j.type_ = Type::Object;
  j.object_ = std::make_shared<const Object>(std::move(members));
  return j;
}

Json Json::parse(const std::string& text) { return Parser(text).parse_document(); }

bool Json::as_bool() const {
  if (type_ != Type::Bool) type_mismatch("a boolean", type_);
  return bool_;
}

double Json::as_number() const {
  if (type_ != Type::Number) type_mismatch("a number", type_);
  return number_;
}

const std::string& Json::as_string() const {
  if (type_ != Type::String) type_mismatch("a string", type_);
  return *string_;
}

const Json::Array& Json::as_array() const {
  if (type_ != Type::Array) type_mismatch("an array", type_);
  return *array_;
}

const Json::Object& Json::as_object() const {
  if (type_ != Type::Object) type_mismatch("an object", type_);
  return *object_;
}

const Json* Json::find(const std::string& key) const {
  if (type_ != Type::Object) return nullptr;
  for (const auto& member : *object_)
    if (member.first == key) return &member.second;
  return nullptr;
}

const Json& Json::at(const std::string& key) const {
  const Json* v = as_object().empty() ? nullptr : find(key);
  if (!v) throw Error("json: missing key " + json_quote(key));
  return *v;
}

std::string Json::dump() const {
  std::string out;
  dump_to(*this, out);
  return out;
}

const char* json_type_name(Json::Type type) {
  switch (type) {
    case Json::Type::Null: return "null";
    case Json::Type::Bool: return "boolean";
    case Json::Type::Number: return "number";
    case Json::Type::String: return "string";
    case Json::Type::Array: return "array";
    case Json::Type::Object: return "object";
  }
  return "?";
}

std::string json_quote(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

}  // namespace attn
