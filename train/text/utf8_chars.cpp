#include "attn/train/text/utf8_chars.h"

namespace attn {
namespace text {

namespace {

bool is_continuation(unsigned char c) { return (c & 0xC0) == 0x80; }

// The code point of a well-formed sequence of `len` bytes at s[i].
uint32_t decode_at(const std::string& s, size_t i, size_t len) {
  const unsigned char lead = static_cast<unsigned char>(s[i]);
  uint32_t cp = len == 1 ? lead : len == 2 ? (lead & 0x1F) : len == 3 ? (lead & 0x0F) : (lead & 0x07);
  for (size_t k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
  return cp;
}

}  // namespace

size_t utf8_char_length(const std::string& s, size_t i) {
  const unsigned char lead = static_cast<unsigned char>(s[i]);
  size_t len = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xE ? 3 : (lead >> 3) == 0x1E ? 4 : 0;
  if (len == 0 || i + len > s.size()) return 1;
  for (size_t k = 1; k < len; ++k)
    if (!is_continuation(static_cast<unsigned char>(s[i + k]))) return 1;
  // Overlong forms and surrogates are not characters; their bytes stand alone.
  const uint32_t cp = decode_at(s, i, len);
  const uint32_t min_for_len[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < min_for_len[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 1;
  return len;
}

std::vector<std::string> utf8_chars(const std::string& s) {
  std::vector<std::string> out;
  for (size_t i = 0; i < s.size();) {
    const size_t len = utf8_char_length(s, i);
    out.push_back(s.substr(i, len));
    i += len;
  }
  return out;
}

bool is_python_space_at(const std::string& s, size_t i) {
  const size_t len = utf8_char_length(s, i);
  const unsigned char lead = static_cast<unsigned char>(s[i]);
  if (len == 1) return (lead >= 0x09 && lead <= 0x0D) || (lead >= 0x1C && lead <= 0x20);
  const uint32_t cp = decode_at(s, i, len);
  return cp == 0x85 || cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 ||
         cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

std::vector<std::string> split_python_whitespace(const std::string& s) {
  std::vector<std::string> out;
  std::string word;
  for (size_t i = 0; i < s.size();) {
    const size_t len = utf8_char_length(s, i);
    if (is_python_space_at(s, i)) {
      if (!word.empty()) out.push_back(std::move(word));
      word.clear();
    } else {
      word.append(s, i, len);
    }
    i += len;
  }
  if (!word.empty()) out.push_back(std::move(word));
  return out;
}

}  // namespace text
}  // namespace attn
